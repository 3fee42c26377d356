#include "io/shard_index_cache.h"

#include <filesystem>

#include "core/cache_entry.h"
#include "io/shard_urls.h"

namespace sluice {

namespace {

constexpr char kMagic[9] = "sluiceI1";

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

}  // namespace

std::string ShardIndexEntryName(const std::string& shard, const FileStamp& stamp, const WebDatasetSpec& spec) {
  return CacheEntryName(KeyOf(shard, stamp, spec), ".idx");
}

std::optional<ShardIndex> LoadShardIndex(const std::string& dir, const std::string& shard, const FileStamp& stamp,
                                         const WebDatasetSpec& spec) {
  const std::optional<std::string> payload = LoadCacheEntry(dir, kMagic, KeyOf(shard, stamp, spec), ".idx");
  if (!payload) return std::nullopt;
  ByteReader r(*payload);
  std::string damage;
  uint64_t n = 0, damage_code = 0;
  if (!r.U64(&damage_code) || !r.Str(&damage) || !r.U64(&n)) return std::nullopt;
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
  ByteWriter w;
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
  return SaveCacheEntry(dir, kMagic, KeyOf(shard, stamp, spec), w.bytes(), ".idx");
}

}  // namespace sluice
