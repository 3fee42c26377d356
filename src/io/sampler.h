// Sampler: which dataset sample sits at each position of an epoch.
//
// A pure function of (seed, epoch, position): with shuffle, the epoch's order is a Fisher-Yates
// permutation driven by Philox keyed by (seed, epoch), the same on every machine and run;
// without, it is 0, 1, 2, ... A checkpoint therefore needs only {seed, epoch, position}.
//
// Thread-safety: IndexAt() is safe from any thread (the cached permutation is guarded).
#ifndef SLUICE_IO_SAMPLER_H_
#define SLUICE_IO_SAMPLER_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace sluice {

class Sampler {
 public:
  Sampler(int64_t num_samples, bool shuffle, uint64_t seed);

  int64_t size() const { return num_samples_; }

  // REQUIRES: 0 <= position < size().
  int64_t IndexAt(int64_t epoch, int64_t position) const;

  // The whole order of one epoch (computed, not cached).
  static std::vector<int64_t> Permutation(int64_t num_samples, uint64_t seed, int64_t epoch);

 private:
  int64_t num_samples_;
  bool shuffle_;
  uint64_t seed_;
  mutable std::mutex mu_;
  mutable int64_t cached_epoch_ = -1;
  mutable std::shared_ptr<const std::vector<int64_t>> cached_;
};

}  // namespace sluice

#endif  // SLUICE_IO_SAMPLER_H_
