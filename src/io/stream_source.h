// StreamSource: the samples of WebDataset shards read as streams, each start to end and never
// seeked: http:// and https:// (libcurl), "pipe:COMMAND", or local files. What it knows before
// reading is how many samples each shard holds: from the caller (a manifest that `sluice pack`
// wrote), or else from one walk over every shard when the source is made (kept in the index
// cache, and filling the disk cache as it goes). Its epochs are laid out by StreamOrder (each
// rank reads a run of the epoch's shards, a few at once, through a bounded shuffle window); a
// loader reads it through a StreamSession, which runs the streams.
//
//   StreamSource::Options o;  o.cache_dir = "/scratch/shards";
//   SLUICE_ASSIGN_OR_RETURN(auto src, StreamSource::Create({"http://h/a-0.tar", "http://h/a-1.tar"}, {}, o));
//
// name() is "url:key.jpg" when the shards were walked, else "url#k" (the k-th sample) until the
// sample has been streamed; label() is -1 until then. Read() is refused: only a session reads.
//
// Thread-safety: immutable after Create; the accessors may run on many threads.
#ifndef SLUICE_IO_STREAM_SOURCE_H_
#define SLUICE_IO_STREAM_SOURCE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "io/shard_disk_cache.h"
#include "io/stream_options.h"
#include "io/stream_order.h"
#include "io/webdataset_layout.h"
#include "sluice/source.h"

namespace sluice {

class StreamSource : public Source {
 public:
  struct Options {
    WebDatasetSpec spec;
    StreamOptions stream;
    StreamLayout layout;
    std::string cache_dir;     // copies of remote shards (ShardDiskCache); empty: none
    int64_t cache_bytes = 0;   // its budget
    std::string index_cache;   // walked shards' indexes (shard_index_cache.h); empty: none
  };

  // `counts`: samples per shard, in the order of `urls`; empty: every shard is walked to count
  // them (8 at a time). Errors: InvalidArgument (no shards, counts of another length or below 0,
  // no sample in all), those of opening or walking a shard (naming it), of the cache folder.
  static Result<std::shared_ptr<const StreamSource>> Create(std::vector<std::string> urls,
                                                           std::vector<int64_t> counts, Options options);

  int64_t size() const override { return offsets_.back(); }
  int64_t label(int64_t index) const override;
  std::string name(int64_t index) const override;
  Result<SampleBytes> Read(int64_t index, const ByteAllocator& memory, int64_t max_bytes) const override;
  // FNV-1a over the shards' file names and sample counts (the same whether they were counted
  // from a manifest or a walk).
  uint64_t Digest() const override;
  std::vector<int64_t> EpochOrder(bool shuffle, uint64_t seed, int64_t epoch, int world_size) const override;

  // Sample `index` as (shard, place in the shard). REQUIRES: 0 <= index < size().
  std::pair<int, int64_t> Locate(int64_t index) const;
  const std::vector<std::string>& urls() const { return urls_; }
  int64_t shard_size(int shard) const { return offsets_[static_cast<size_t>(shard) + 1] - offsets_[static_cast<size_t>(shard)]; }
  const Options& options() const { return options_; }
  // The disk cache, or null.
  ShardDiskCache* disk_cache() const { return cache_.get(); }
  // Shards walked when the source was made, and those of them whose index came from the cache.
  int64_t walked_shards() const { return walked_; }
  int64_t cached_indexes() const { return cached_indexes_; }

 private:
  StreamSource() = default;

  std::vector<std::string> urls_;
  std::vector<int64_t> offsets_{0};   // first index of each shard, then size()
  std::vector<int64_t> labels_;       // by index, when walked
  std::vector<std::string> members_;  // by index ("key.jpg"), when walked
  Options options_;
  std::shared_ptr<ShardDiskCache> cache_;
  int64_t walked_ = 0, cached_indexes_ = 0;
};

}  // namespace sluice

#endif  // SLUICE_IO_STREAM_SOURCE_H_
