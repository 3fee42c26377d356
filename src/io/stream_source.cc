#include "io/stream_source.h"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <thread>

#include "core/fnv.h"
#include "io/shard_index_cache.h"
#include "io/shard_stream.h"
#include "io/shard_urls.h"
#include "io/tar_reader.h"
#include "io/webdataset_index.h"

namespace sluice {

namespace {

struct Walked {
  Status error;  // the shard could not be opened
  ShardIndex index;
  bool cached = false;  // the index came from the index cache
};

// What the index cache keys a shard by: a local file's size and modification time; a stream's
// url alone (a shard rewritten on its server needs the index cache cleared).
FileStamp StampOf(const std::string& url) {
  struct stat st;
  if (IsStreamUrl(url) || stat(url.c_str(), &st) != 0) return FileStamp{-1, -1};
  return FileStamp{st.st_size, static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

Walked Walk(const std::string& url, const StreamSource::Options& o, ShardDiskCache* cache) {
  Walked w;
  const FileStamp stamp = StampOf(url);
  if (!o.index_cache.empty()) {
    if (std::optional<ShardIndex> hit = LoadShardIndex(o.index_cache, url, stamp, o.spec)) {
      w.index = std::move(*hit);
      w.cached = true;
      return w;
    }
  }
  Result<std::unique_ptr<ShardStream>> stream = ShardStream::Open(url, o.stream, cache);
  if (!stream.ok()) {
    w.error = stream.status();
    return w;
  }
  TarReader tar((*stream)->input(), url);
  w.index = IndexShard(&tar, o.spec);
  // A stream that failed (IOError) is an error of the source, not damage of the shard.
  if (w.index.damage.code() == StatusCode::kIOError) {
    w.error = w.index.damage;
    return w;
  }
  if (w.index.damage.ok()) (void)(*stream)->Finish();  // the rest into the disk cache; a failure only costs a copy
  if (!o.index_cache.empty()) (void)SaveShardIndex(o.index_cache, url, stamp, o.spec, w.index);
  return w;
}

std::string_view BaseName(std::string_view url) {
  const size_t slash = url.find_last_of("/ ");
  return slash == std::string_view::npos ? url : url.substr(slash + 1);
}

}  // namespace

Result<std::shared_ptr<const StreamSource>> StreamSource::Create(std::vector<std::string> urls,
                                                                std::vector<int64_t> counts, Options options) {
  if (urls.empty()) return InvalidArgument("no shards given");
  if (!counts.empty() && counts.size() != urls.size())
    return InvalidArgument(counts.size(), " sample counts for ", urls.size(), " shards");
  if (options.spec.image_exts.empty()) return InvalidArgument("image_key names no extension");
  if (options.layout.lanes < 1) return InvalidArgument("lanes must be at least 1, got ", options.layout.lanes);
  if (options.layout.window < 1) return InvalidArgument("shuffle_buffer must be at least 1, got ", options.layout.window);
  std::shared_ptr<StreamSource> src(new StreamSource());
  if (!options.cache_dir.empty()) {
    SLUICE_ASSIGN_OR_RETURN(src->cache_, ShardDiskCache::Open(options.cache_dir, options.cache_bytes));
  }
  if (counts.empty()) {
    std::vector<Walked> walked(urls.size());
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t i; (i = next.fetch_add(1)) < urls.size();) walked[i] = Walk(urls[i], options, src->cache_.get());
    };
    std::vector<std::thread> threads;
    for (size_t t = 1; t < std::min<size_t>(urls.size(), 8); ++t) threads.emplace_back(work);
    work();
    for (std::thread& t : threads) t.join();
    for (size_t s = 0; s < urls.size(); ++s) {
      SLUICE_RETURN_IF_ERROR(walked[s].error);
      const ShardIndex& index = walked[s].index;
      for (const ShardSample& sample : index.samples) {
        src->labels_.push_back(sample.label);
        src->members_.push_back(sample.key + "." + (sample.image_ext.empty() ? std::string("*") : sample.image_ext));
      }
      if (!index.damage.ok()) {  // one more failing entry stands for the damaged tail
        src->labels_.push_back(-1);
        src->members_.emplace_back();
      }
      counts.push_back(static_cast<int64_t>(index.samples.size()) + (index.damage.ok() ? 0 : 1));
      src->cached_indexes_ += walked[s].cached ? 1 : 0;
    }
    src->walked_ = static_cast<int64_t>(urls.size());
  }
  for (size_t s = 0; s < counts.size(); ++s) {
    if (counts[s] < 0) return InvalidArgument(urls[s], ": a sample count below 0 (", counts[s], ")");
    src->offsets_.push_back(src->offsets_.back() + counts[s]);
  }
  if (src->offsets_.back() == 0) return InvalidArgument("no samples in ", urls.size(), " shard(s), the first ", urls[0]);
  src->urls_ = std::move(urls);
  src->options_ = std::move(options);
  return std::shared_ptr<const StreamSource>(std::move(src));
}

std::pair<int, int64_t> StreamSource::Locate(int64_t index) const {
  const auto it = std::upper_bound(offsets_.begin(), offsets_.end(), index) - 1;
  return {static_cast<int>(it - offsets_.begin()), index - *it};
}

int64_t StreamSource::label(int64_t index) const {
  return labels_.empty() ? -1 : labels_[static_cast<size_t>(index)];
}

std::string StreamSource::name(int64_t index) const {
  const auto [shard, k] = Locate(index);
  const std::string& url = urls_[static_cast<size_t>(shard)];
  if (members_.empty()) return url + "#" + std::to_string(k);
  const std::string& member = members_[static_cast<size_t>(index)];
  return member.empty() ? url : url + ":" + member;
}

Result<SampleBytes> StreamSource::Read(int64_t index, const ByteAllocator&, int64_t) const {
  return FailedPrecondition(name(index), ": streamed shards are read through a Loader (a StreamSession)");
}

uint64_t StreamSource::Digest() const {
  Fnv1a h;
  for (size_t s = 0; s < urls_.size(); ++s) {
    const int64_t n = shard_size(static_cast<int>(s));
    h.Mix(BaseName(urls_[s]));
    h.Mix(&n, sizeof(n));
  }
  return h.value();
}

std::vector<int64_t> StreamSource::EpochOrder(bool shuffle, uint64_t seed, int64_t epoch, int world_size) const {
  std::vector<int64_t> sizes;
  for (size_t s = 0; s < urls_.size(); ++s) sizes.push_back(shard_size(static_cast<int>(s)));
  return StreamOrder(sizes, options_.layout, shuffle, seed, epoch, world_size);
}

}  // namespace sluice
