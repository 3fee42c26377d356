#include "core/cache_entry.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/fnv.h"

namespace sluice {

namespace {

constexpr size_t kMagicSize = 8;

uint64_t Fnv(std::string_view bytes) {
  Fnv1a h;
  h.Mix(bytes);
  return h.value();
}

}  // namespace

std::string CacheEntryName(std::string_view key, const char* ext) {
  char name[24];
  std::snprintf(name, sizeof(name), "%016llx", static_cast<unsigned long long>(Fnv(key)));
  return name + std::string(ext);
}

std::optional<std::string> LoadCacheEntry(const std::string& dir, const char* magic, std::string_view key,
                                          const char* ext) {
  std::ifstream f(std::filesystem::path(dir) / CacheEntryName(key, ext), std::ios::binary);
  if (!f) return std::nullopt;
  std::stringstream buf;
  buf << f.rdbuf();
  const std::string all = buf.str();
  // magic, body (key, payload), the body's checksum
  if (all.size() < kMagicSize + 8 || std::memcmp(all.data(), magic, kMagicSize) != 0) return std::nullopt;
  const std::string_view body(all.data() + kMagicSize, all.size() - kMagicSize - 8);
  uint64_t sum;
  std::memcpy(&sum, all.data() + all.size() - 8, 8);
  if (sum != Fnv(body)) return std::nullopt;
  ByteReader r(body);
  std::string stored;
  if (!r.Str(&stored) || stored != key) return std::nullopt;
  const size_t payload = sizeof(uint64_t) + stored.size();
  return std::string(body.substr(payload));
}

Status SaveCacheEntry(const std::string& dir, const char* magic, std::string_view key, std::string_view payload,
                      const char* ext) {
  ByteWriter w;
  w.Str(key);
  const std::string body = w.bytes() + std::string(payload);
  const uint64_t sum = Fnv(body);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::filesystem::path final_path = std::filesystem::path(dir) / CacheEntryName(key, ext);
  static std::atomic<uint64_t> serial{0};
  const std::filesystem::path tmp =
      final_path.string() + ".tmp." + std::to_string(getpid()) + "." + std::to_string(serial.fetch_add(1));
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f.write(magic, kMagicSize);
    f.write(body.data(), static_cast<std::streamsize>(body.size()));
    f.write(reinterpret_cast<const char*>(&sum), sizeof(sum));
    if (!f.flush()) {
      std::filesystem::remove(tmp, ec);
      return IOError(tmp.string(), ": cannot write the cache entry");
    }
  }
  std::filesystem::rename(tmp, final_path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return IOError(final_path.string(), ": cannot write the cache entry: ", ec.message());
  }
  return Status::OK();
}

}  // namespace sluice
