// CacheEntry: one file of a cache folder (shard indexes, video indexes), written whole and read
// back only when exact. A file holds a magic tag, a body that starts with the entry's key (what
// it was made from, e.g. a file's path, size and modification time), and the body's FNV-1a
// checksum. It is written to a temporary file and renamed, so a reader sees the whole file or
// none; a file that does not read back exactly, or was made for another key, is a miss.
//
//   ByteWriter w;  w.I64(n);  ...
//   (void)SaveCacheEntry(dir, "sluiceV1", key, w.bytes(), ".vidx");
//   if (std::optional<std::string> body = LoadCacheEntry(dir, "sluiceV1", key, ".vidx")) { ByteReader r(*body); ... }
//
// Thread-safety: free functions and values; many threads and processes may load and save the
// same or different entries at once.
#ifndef SLUICE_CORE_CACHE_ENTRY_H_
#define SLUICE_CORE_CACHE_ENTRY_H_

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "sluice/status.h"

namespace sluice {

// Little-endian-as-stored integers and length-prefixed strings.
class ByteWriter {
 public:
  void U64(uint64_t v) { out_.append(reinterpret_cast<const char*>(&v), sizeof(v)); }
  void I64(int64_t v) { U64(static_cast<uint64_t>(v)); }
  void Str(std::string_view s) {
    U64(s.size());
    out_ += s;
  }
  const std::string& bytes() const { return out_; }

 private:
  std::string out_;
};

// Reads what ByteWriter wrote; each call false (and nothing read) past the end.
class ByteReader {
 public:
  explicit ByteReader(std::string_view in) : in_(in) {}
  bool U64(uint64_t* v) {
    if (in_.size() - at_ < sizeof(*v)) return false;
    std::memcpy(v, in_.data() + at_, sizeof(*v));
    at_ += sizeof(*v);
    return true;
  }
  bool I64(int64_t* v) {
    uint64_t u;
    if (!U64(&u)) return false;
    *v = static_cast<int64_t>(u);
    return true;
  }
  bool Str(std::string* s) {
    uint64_t n;
    if (!U64(&n) || n > in_.size() - at_) return false;
    s->assign(in_.data() + at_, n);
    at_ += n;
    return true;
  }
  bool AtEnd() const { return at_ == in_.size(); }

 private:
  std::string_view in_;
  size_t at_ = 0;
};

// The entry's file name in the folder: a hash of `key` and the extension ("0123abcd....idx").
std::string CacheEntryName(std::string_view key, const char* ext);

// The payload saved under `key` (without the key), or nullopt when the entry is missing,
// unreadable, damaged, of another `magic` (8 characters) or another key.
std::optional<std::string> LoadCacheEntry(const std::string& dir, const char* magic, std::string_view key,
                                          const char* ext);

// Writes the entry (the folder made if missing). IOError naming the file when it cannot.
Status SaveCacheEntry(const std::string& dir, const char* magic, std::string_view key, std::string_view payload,
                      const char* ext);

}  // namespace sluice

#endif  // SLUICE_CORE_CACHE_ENTRY_H_
