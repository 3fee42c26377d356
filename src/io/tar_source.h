// TarSource: the samples of local WebDataset shards, read by offset (the indexed mode). Each
// shard is walked once when the source is made (IndexShard; several shards at once), giving
// every sample's image offset and label; then a sample is one pread from a few open shards
// (ShardFiles), so the loader shuffles, shards over ranks and resumes exactly as with files.
//
//   SLUICE_ASSIGN_OR_RETURN(auto source, TarSource::Create({"train-0.tar", "train-1.tar"}, {}));
//   source->size();      // samples in all shards, in shard order
//   source->name(0);     // "train-0.tar:n0001.jpg"
//
// A sample without its image or label, with a bad label, or a duplicate key stays in the list
// and fails when read, naming itself (the loader's on_error decides); damage to a shard's
// archive (truncated, a corrupt header) is one more failing entry, named by the shard, after
// the samples before it.
//
// Thread-safety: immutable after Create; Read and the accessors may run on many threads.
#ifndef SLUICE_IO_TAR_SOURCE_H_
#define SLUICE_IO_TAR_SOURCE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "io/shard_files.h"
#include "io/webdataset_layout.h"
#include "sluice/source.h"

namespace sluice {

class TarSource : public Source {
 public:
  // `index_cache`: a folder where shard indexes are kept between runs (shard_index_cache.h);
  // empty: every shard is walked. Errors: InvalidArgument (no shards, a stream url: StreamSource
  // reads those), NotFound / IOError / Unsupported for a shard that cannot be opened,
  // InvalidArgument when no shard holds a sample.
  static Result<std::shared_ptr<const TarSource>> Create(const std::vector<std::string>& shards,
                                                        WebDatasetSpec spec, const std::string& index_cache = "");

  int64_t size() const override { return static_cast<int64_t>(entries_.size()); }
  int64_t label(int64_t index) const override { return entries_[static_cast<size_t>(index)].label; }
  // "<shard path>:<member>" ("train-0.tar:n0001.jpg"), or the shard's path for its damage.
  std::string name(int64_t index) const override;
  Result<SampleBytes> Read(int64_t index, const ByteAllocator& memory, int64_t max_bytes) const override;
  // FNV-1a over each sample's label, shard file name and member name.
  uint64_t Digest() const override;

  const std::vector<std::string>& shards() const { return shards_; }
  // Entries that fail when read (their reasons: Read's errors).
  int64_t bad_count() const { return static_cast<int64_t>(problems_.size()); }
  // Shards whose index came from the index cache, not a walk.
  int64_t cached_shards() const { return cached_shards_; }

  // Descriptors kept open at most.
  static constexpr int kMaxOpenShards = 64;

  struct Entry {
    int32_t shard = 0;
    int64_t offset = -1, size = 0, label = -1;
    uint64_t member_at = 0;   // the member's name in names_
    uint32_t member_len = 0;  // 0: the shard's damage
  };
  TarSource(std::vector<std::string> shards, std::vector<FileStamp> stamps, std::vector<Entry> entries,
            std::string names, std::unordered_map<int64_t, std::string> problems);

 private:
  std::vector<std::string> shards_;
  std::vector<Entry> entries_;
  std::string names_;                                   // members' names, back to back
  std::unordered_map<int64_t, std::string> problems_;  // entry -> its error message
  ShardFiles files_;
  int64_t cached_shards_ = 0;
};

}  // namespace sluice

#endif  // SLUICE_IO_TAR_SOURCE_H_
