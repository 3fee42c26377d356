// MemoryCache: a Source that keeps the encoded bytes of another in host memory after their
// first read (the loader's cache="memory"), up to a byte budget. Samples are kept as they are
// first read until the budget is full, and then kept: no eviction, so with a dataset larger than
// the budget the same part is served from memory every epoch (a least-recently-used cache would
// miss on every read of a shuffled epoch). How a read comes back (CacheHandOut): kShare, the CPU
// path's, hands out the kept buffer itself (the bytes are shared, never copied), and a sample the
// budget has room for is read straight into the buffer kept; kCopy, the GPU path's, reads and
// hands out every sample in the caller's memory (there page-locked: nvJPEG copies files to the
// GPU faster from it than from the system's memory, docs/benchmarks.md) and keeps a copy. Failed
// reads are not kept.
//
//   auto cached = std::make_shared<MemoryCache>(source, 8ll << 30);
//   cached->Read(i, memory, max_bytes);     // from `source` the first time, from memory after
//   cached->counters();                     // hits, misses, bytes held
//
// Thread-safety: Read and the accessors may run on many threads at once.
#ifndef SLUICE_IO_MEMORY_CACHE_H_
#define SLUICE_IO_MEMORY_CACHE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "sluice/source.h"

namespace sluice {

enum class CacheHandOut { kShare, kCopy };

class MemoryCache : public Source {
 public:
  // REQUIRES: source != nullptr; budget >= 0.
  MemoryCache(std::shared_ptr<const Source> source, int64_t budget, CacheHandOut hand_out = CacheHandOut::kShare);

  int64_t size() const override { return source_->size(); }
  int64_t label(int64_t index) const override { return source_->label(index); }
  std::string name(int64_t index) const override { return source_->name(index); }
  Result<SampleBytes> Read(int64_t index, const ByteAllocator& memory, int64_t max_bytes) const override;
  uint64_t Digest() const override { return source_->Digest(); }
  const std::vector<std::string>& classes() const override { return source_->classes(); }
  std::vector<int64_t> EpochOrder(bool shuffle, uint64_t seed, int64_t epoch, int world_size) const override {
    return source_->EpochOrder(shuffle, seed, epoch, world_size);
  }

  struct Counters {
    int64_t hits = 0, misses = 0;  // reads served from memory / from the source
    int64_t bytes = 0;             // held
    int64_t budget = 0;
  };
  Counters counters() const;
  void ResetCounters();  // hits and misses to 0

 private:
  struct Kept {
    std::shared_ptr<uint8_t> owner;
    size_t size = 0;
  };
  Result<SampleBytes> ReadAndShare(int64_t index, const ByteAllocator& memory, int64_t max_bytes) const;
  Result<SampleBytes> ReadAndCopy(int64_t index, const ByteAllocator& memory, int64_t max_bytes) const;
  // Under mu_: the kept bytes of `index` when they fit max_bytes, else a null owner.
  Kept Find(int64_t index, int64_t max_bytes) const;

  std::shared_ptr<const Source> source_;
  const int64_t budget_;
  const CacheHandOut hand_out_;
  mutable std::mutex mu_;
  mutable std::vector<Kept> kept_;  // by index, under mu_
  mutable int64_t bytes_ = 0;       // under mu_
  mutable std::atomic<int64_t> hits_{0}, misses_{0};
};

}  // namespace sluice

#endif  // SLUICE_IO_MEMORY_CACHE_H_
