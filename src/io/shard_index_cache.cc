#include "io/shard_index_cache.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/fnv.h"
#include "io/shard_urls.h"

namespace sluice {

namespace {

constexpr char kMagic[8] = {'s', 'l', 'u', 'i', 'c', 'e', 'I', '1'};

uint64_t Fnv(std::string_view bytes) {
  Fnv1a h;
  h.Mix(bytes);
  return h.value();
}

// What identifies an entry: the shard, its stamp and the spec, as one string.
std::string KeyOf(const std::string& shard, const FileStamp& stamp, const WebDatasetSpec& spec) {
  std::error_code ec;
  const std::filesystem::path abs = std::filesystem::absolute(shard, ec);  // a url is kept as written
  std::string key = (ec || IsStreamUrl(shard) ? shard : abs.string()) + '\0' + std::to_string(stamp.size) + '\0' + std::to_string(stamp.mtime_ns);
  for (const auto* list : {&spec.image_exts, &spec.label_exts}) {
    key += '\0';
    for (const std::string& e : *list) key += e + ';';
  }
  return key + '\0' + spec.label_field;
}

class Writer {
 public:
  void U64(uint64_t v) { out_.append(reinterpret_cast<const char*>(&v), sizeof(v)); }
  void I64(int64_t v) { U64(static_cast<uint64_t>(v)); }
  void Str(const std::string& s) {
    U64(s.size());
    out_ += s;
  }
  std::string& bytes() { return out_; }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
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

}  // namespace

std::string ShardIndexEntryName(const std::string& shard, const FileStamp& stamp, const WebDatasetSpec& spec) {
  char name[32];
  std::snprintf(name, sizeof(name), "%016llx.idx", static_cast<unsigned long long>(Fnv(KeyOf(shard, stamp, spec))));
  return name;
}

std::optional<ShardIndex> LoadShardIndex(const std::string& dir, const std::string& shard, const FileStamp& stamp,
                                         const WebDatasetSpec& spec) {
  std::ifstream f(std::filesystem::path(dir) / ShardIndexEntryName(shard, stamp, spec), std::ios::binary);
  if (!f) return std::nullopt;
  std::stringstream buf;
  buf << f.rdbuf();
  const std::string all = buf.str();
  // magic, body, the body's checksum
  if (all.size() < sizeof(kMagic) + 8 || std::memcmp(all.data(), kMagic, sizeof(kMagic)) != 0) return std::nullopt;
  const std::string_view body(all.data() + sizeof(kMagic), all.size() - sizeof(kMagic) - 8);
  uint64_t sum;
  std::memcpy(&sum, all.data() + all.size() - 8, 8);
  if (sum != Fnv(body)) return std::nullopt;
  Reader r(body);
  std::string key, damage;
  uint64_t n = 0, damage_code = 0;
  if (!r.Str(&key) || key != KeyOf(shard, stamp, spec) || !r.U64(&damage_code) || !r.Str(&damage) || !r.U64(&n))
    return std::nullopt;
  ShardIndex index;
  if (damage_code != 0) index.damage = Status(static_cast<StatusCode>(damage_code), damage);
  for (uint64_t i = 0; i < n; ++i) {
    ShardSample s;
    if (!r.Str(&s.key) || !r.Str(&s.image_ext) || !r.I64(&s.offset) || !r.I64(&s.size) || !r.I64(&s.label) ||
        !r.Str(&s.problem))
      return std::nullopt;
    index.samples.push_back(std::move(s));
  }
  if (!r.AtEnd()) return std::nullopt;
  return index;
}

Status SaveShardIndex(const std::string& dir, const std::string& shard, const FileStamp& stamp,
                      const WebDatasetSpec& spec, const ShardIndex& index) {
  Writer w;
  w.Str(KeyOf(shard, stamp, spec));
  w.U64(static_cast<uint64_t>(index.damage.code()));
  w.Str(index.damage.message());
  w.U64(index.samples.size());
  for (const ShardSample& s : index.samples) {
    w.Str(s.key);
    w.Str(s.image_ext);
    w.I64(s.offset);
    w.I64(s.size);
    w.I64(s.label);
    w.Str(s.problem);
  }
  const uint64_t sum = Fnv(w.bytes());
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::filesystem::path final_path = std::filesystem::path(dir) / ShardIndexEntryName(shard, stamp, spec);
  static std::atomic<uint64_t> serial{0};
  const std::filesystem::path tmp =
      final_path.string() + ".tmp." + std::to_string(getpid()) + "." + std::to_string(serial.fetch_add(1));
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f.write(kMagic, sizeof(kMagic));
    f.write(w.bytes().data(), static_cast<std::streamsize>(w.bytes().size()));
    f.write(reinterpret_cast<const char*>(&sum), sizeof(sum));
    if (!f.flush()) {
      std::filesystem::remove(tmp, ec);
      return IOError(tmp.string(), ": cannot write the shard index");
    }
  }
  std::filesystem::rename(tmp, final_path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return IOError(final_path.string(), ": cannot write the shard index: ", ec.message());
  }
  return Status::OK();
}

}  // namespace sluice
