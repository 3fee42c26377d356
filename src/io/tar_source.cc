#include "io/tar_source.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <utility>

#include "core/fnv.h"
#include "io/shard_index_cache.h"
#include "io/shard_urls.h"
#include "io/tar_reader.h"
#include "io/webdataset_index.h"

namespace sluice {

namespace {

struct Walked {
  Status open;  // the shard could not be opened
  FileStamp stamp;
  ShardIndex index;
  bool cached = false;  // the index came from the cache
};

// The shard's index: from the cache folder `cache` when it holds it (and cache is not empty),
// else walked, and then kept there (a cache that cannot be written only costs the next walk).
Walked Walk(const std::string& path, const WebDatasetSpec& spec, const std::string& cache) {
  Walked w;
  FileInput in;
  if (w.open = in.Open(path); !w.open.ok()) return w;
  Result<FileStamp> stamp = in.Stamp();
  if (!stamp.ok()) {
    w.open = stamp.status();
    return w;
  }
  w.stamp = *stamp;
  if (!cache.empty()) {
    if (std::optional<ShardIndex> hit = LoadShardIndex(cache, path, w.stamp, spec)) {
      w.index = std::move(*hit);
      w.cached = true;
      return w;
    }
  }
  TarReader tar(&in, path);
  w.index = IndexShard(&tar, spec);
  if (!cache.empty() && w.index.damage.code() != StatusCode::kIOError)
    (void)SaveShardIndex(cache, path, w.stamp, spec, w.index);  // a miss next time, nothing worse
  return w;
}

// Every shard walked, on up to 8 threads.
std::vector<Walked> WalkAll(const std::vector<std::string>& shards, const WebDatasetSpec& spec,
                            const std::string& cache) {
  std::vector<Walked> out(shards.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < shards.size();) out[i] = Walk(shards[i], spec, cache);
  };
  const size_t n = std::min<size_t>({shards.size(), 8, std::max(1u, std::thread::hardware_concurrency())});
  std::vector<std::thread> threads;
  for (size_t t = 1; t < n; ++t) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();
  return out;
}

std::string_view BaseName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

Result<std::shared_ptr<const TarSource>> TarSource::Create(const std::vector<std::string>& shards,
                                                          WebDatasetSpec spec, const std::string& index_cache) {
  if (shards.empty()) return InvalidArgument("no shards given");
  for (const std::string& s : shards)
    if (IsStreamUrl(s)) return InvalidArgument(s, ": a stream (http, https, pipe:) cannot be read by offset: read it with StreamSource");
  if (spec.image_exts.empty()) return InvalidArgument("image_key names no extension");
  for (const std::string& ext : spec.label_exts)
    if (ext.ends_with("json") && spec.label_field.empty())
      return InvalidArgument("label_key '", ext, "' is JSON: label_field must name the field that holds the label");
  std::vector<Walked> walked = WalkAll(shards, spec, index_cache);
  int64_t cached = 0;
  std::vector<FileStamp> stamps;
  std::vector<Entry> entries;
  std::string names;
  std::unordered_map<int64_t, std::string> problems;
  for (size_t s = 0; s < walked.size(); ++s) {
    Walked& w = walked[s];
    SLUICE_RETURN_IF_ERROR(w.open);
    stamps.push_back(w.stamp);
    cached += w.cached ? 1 : 0;
    for (const ShardSample& sample : w.index.samples) {
      Entry e;
      e.shard = static_cast<int32_t>(s);
      e.offset = sample.offset;
      e.size = sample.size;
      e.label = sample.label;
      const std::string member = sample.key + "." + (sample.image_ext.empty() ? std::string("*") : sample.image_ext);
      e.member_at = names.size();
      e.member_len = static_cast<uint32_t>(member.size());
      names += member;
      if (!sample.problem.empty())
        problems.emplace(static_cast<int64_t>(entries.size()), shards[s] + ":" + member + ": " + sample.problem);
      entries.push_back(e);
    }
    if (!w.index.damage.ok()) {
      Entry e;
      e.shard = static_cast<int32_t>(s);
      problems.emplace(static_cast<int64_t>(entries.size()), w.index.damage.message());
      entries.push_back(e);
    }
  }
  if (entries.empty()) return InvalidArgument("no samples in ", shards.size(), " shard(s), the first ", shards[0]);
  auto source = std::make_shared<TarSource>(shards, std::move(stamps), std::move(entries), std::move(names),
                                           std::move(problems));
  source->cached_shards_ = cached;
  return std::shared_ptr<const TarSource>(std::move(source));
}

TarSource::TarSource(std::vector<std::string> shards, std::vector<FileStamp> stamps, std::vector<Entry> entries,
                     std::string names, std::unordered_map<int64_t, std::string> problems)
    : shards_(shards),
      entries_(std::move(entries)),
      names_(std::move(names)),
      problems_(std::move(problems)),
      files_(std::move(shards), std::move(stamps), kMaxOpenShards) {}

std::string TarSource::name(int64_t index) const {
  const Entry& e = entries_[static_cast<size_t>(index)];
  const std::string& shard = shards_[static_cast<size_t>(e.shard)];
  if (e.member_len == 0) return shard;
  return shard + ":" + names_.substr(e.member_at, e.member_len);
}

Result<SampleBytes> TarSource::Read(int64_t index, const ByteAllocator& memory, int64_t max_bytes) const {
  if (auto it = problems_.find(index); it != problems_.end()) return CorruptData(it->second);
  const Entry& e = entries_[static_cast<size_t>(index)];
  if (e.size > max_bytes)
    return Unsupported(name(index), ": ", e.size, " bytes, over the file size limit of ", max_bytes,
                       " bytes (max_file_bytes)");
  const size_t size = static_cast<size_t>(e.size);
  SampleBytes out;
  out.owner = memory(size + 1);
  if (!out.owner) return ResourceExhausted(name(index), ": cannot allocate ", size, " bytes");
  if (Status st = files_.ReadAt(e.shard, e.offset, std::span<uint8_t>(out.owner.get(), size)); !st.ok())
    return st.WithPrefix(name(index));
  out.data = out.owner.get();
  out.size = size;
  return out;
}

uint64_t TarSource::Digest() const {
  Fnv1a h;
  for (const Entry& e : entries_) {
    h.Mix(&e.label, sizeof(e.label));
    h.Mix(BaseName(shards_[static_cast<size_t>(e.shard)]));
    h.Mix(":", 1);
    h.Mix(names_.data() + e.member_at, e.member_len);
    h.Mix("", 1);
  }
  return h.value();
}

}  // namespace sluice
