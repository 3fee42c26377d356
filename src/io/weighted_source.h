// WeightedSource: a source whose epochs are drawn with per-sample weights, as PyTorch's
// WeightedRandomSampler draws them (Loader(weights=...)): an epoch is size() positions, each a
// sample index drawn with probability weights[i] / sum(weights), with replacement (a sample may
// come several times or not at all), or without (every sample once, heavier ones earlier on
// average). The draws are a pure function of (seed, epoch); the positions are then sharded over
// ranks, delivered exactly once and resumed like any epoch's. Reading is the base source's.
//
//   Result<std::shared_ptr<const Source>> s = WeightedSource::Create(base, weights, true);
//
// REQUIRES: the base source is read by index (not a stream of shards).
// Thread-safety: immutable; any thread may call it.
#ifndef SLUICE_IO_WEIGHTED_SOURCE_H_
#define SLUICE_IO_WEIGHTED_SOURCE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sluice/source.h"
#include "sluice/status.h"

namespace sluice {

class WeightedSource : public Source {
 public:
  // InvalidArgument (naming `weights`) unless there is one finite weight >= 0 per sample with a
  // positive sum, and, without replacement, no zero weight (every sample must come once).
  static Result<std::shared_ptr<const Source>> Create(std::shared_ptr<const Source> base, std::vector<double> weights,
                                                      bool replacement);

  int64_t size() const override { return base_->size(); }
  int64_t label(int64_t index) const override { return base_->label(index); }
  std::string name(int64_t index) const override { return base_->name(index); }
  Result<SampleBytes> Read(int64_t index, const ByteAllocator& memory, int64_t max_bytes) const override {
    return base_->Read(index, memory, max_bytes);
  }
  uint64_t Digest() const override { return digest_; }  // the base's, the weights and the mode
  const std::vector<std::string>& classes() const override { return base_->classes(); }
  // The weighted draw of epoch `epoch` (shuffle is not used: the weights draw the order).
  std::vector<int64_t> EpochOrder(bool shuffle, uint64_t seed, int64_t epoch, int world_size) const override;

 private:
  WeightedSource(std::shared_ptr<const Source> base, std::vector<double> weights, bool replacement);

  std::shared_ptr<const Source> base_;
  std::vector<double> cumulative_;  // running sums of the weights
  std::vector<double> weights_;
  bool replacement_;
  uint64_t digest_;
};

}  // namespace sluice

#endif  // SLUICE_IO_WEIGHTED_SOURCE_H_
