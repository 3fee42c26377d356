// EpochSchedule: the batches one rank yields in one epoch, as a pure function of the dataset
// size, the shuffle seed, the epoch, the rank and world size, the batch size, the last-batch
// policy, and (for a resumed epoch) the positions already delivered. No communication: every
// rank computes the same global permutation and takes its own part.
//
//   global order    the epoch's permutation (Sampler), minus positions already consumed
//   rank r's part   global positions r, r + W, r + 2W, ...  (W = world size)
//   "drop"          every rank yields floor(min part / B) full batches
//   "pad"           every rank yields ceil(max part / B) full batches; the global order is
//                   extended cyclically from its start, and the repeats are marked as padding
//   "partial"       every rank yields ceil(max part / B) batches; a rank with one sample fewer
//                   ends with a shorter batch (and, when needed, a batch of one), so that all
//                   ranks yield the same number of batches and a DDP job never waits on one
// The union of the non-padding samples over ranks is every remaining sample exactly once
// ("drop" leaves out at most W * B - 1 of them).
//
// Thread-safety: immutable after Create(); any thread may read it.
#ifndef SLUICE_IO_EPOCH_SCHEDULE_H_
#define SLUICE_IO_EPOCH_SCHEDULE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "sluice/status.h"
#include "sluice/types.h"

namespace sluice {

// The order of an epoch (global position -> sample index) for (shuffle, seed, epoch, world
// size): Source::EpochOrder. Empty: Sampler's permutation, or 0, 1, 2, ... without shuffle.
using EpochOrderFn = std::function<std::vector<int64_t>(bool shuffle, uint64_t seed, int64_t epoch, int world_size)>;

struct ShardOptions {
  int64_t num_samples = 0;
  bool shuffle = false;
  uint64_t seed = 0;
  int batch_size = 1;
  LastBatch last_batch = LastBatch::kPartial;
  int rank = 0;
  int world_size = 1;
  EpochOrderFn order;
};

class EpochSchedule {
 public:
  // `consumed` (empty, or one flag per global position): positions of this epoch already
  // delivered before a resume. Errors (InvalidArgument) name the arguments: a rank outside
  // [0, world_size), or a policy that leaves some rank without a batch.
  static Result<EpochSchedule> Create(const ShardOptions& options, int64_t epoch,
                                      std::vector<uint8_t> consumed = {});

  int64_t epoch() const { return epoch_; }
  int64_t num_batches() const { return num_batches_; }  // the same on every rank
  bool resumed() const { return resumed_; }              // created with consumed positions

  // Batch `b` of this rank: dataset indices and, per sample, 1 if it is padding (a repeat).
  // REQUIRES: 0 <= b < num_batches().
  void Batch(int64_t b, std::vector<int64_t>* indices, std::vector<uint8_t>* pad) const;

  // One flag per global position: delivered once every rank has taken its first `batches`
  // batches (the positions consumed before this schedule included). For a checkpoint.
  std::vector<uint8_t> ConsumedAfter(int64_t batches) const;

  // Global position -> sample index.
  const std::vector<int64_t>& order() const { return *order_; }
  // Every sample index this rank reads from batch `first` on, in order (repeats included).
  std::vector<int64_t> IndicesFrom(int64_t first) const;

 private:
  // Global positions of rank `r`'s part (before padding), and its batch boundaries.
  int64_t PartSize(int r) const;
  int64_t PartPosition(int r, int64_t j) const;  // j may run past the part: padding
  int64_t BatchStart(int r, int64_t b) const;

  ShardOptions o_;
  int64_t epoch_ = 0;
  int64_t num_batches_ = 0;
  std::shared_ptr<const std::vector<int64_t>> order_;      // global position -> dataset index
  std::shared_ptr<const std::vector<int64_t>> remaining_;  // positions not yet consumed
  std::vector<uint8_t> consumed_;
  bool resumed_ = false;
};

}  // namespace sluice

#endif  // SLUICE_IO_EPOCH_SCHEDULE_H_
