// LoaderState: a loader's place in an epoch, for a checkpoint (Loader::State, Loader::LoadState).
//
// Thread-safety: a plain value.
#ifndef SLUICE_LOADER_STATE_H_
#define SLUICE_LOADER_STATE_H_

#include <cstdint>
#include <vector>

#include "sluice/types.h"

namespace sluice {

// Where a loader stands in an epoch: saved by Loader::State() with a checkpoint, given back to
// Loader::LoadState() to resume. Ranks that step in lockstep (a DDP job) have the same state
// but for the rank, so rank 0's is enough for every rank.
struct LoaderState {
  int64_t epoch = 0;
  int64_t batches = 0;         // batches of `epoch` this rank has taken (an error counts)
  int64_t epoch_batches = 0;   // batches `epoch` has on this rank; batches == epoch_batches: done
  // What the state was taken under. The dataset, shuffle and seed must match on load; the batch
  // size, world size and last-batch policy may differ (an elastic resume).
  int64_t num_samples = 0;
  uint64_t dataset_digest = 0;  // Source::Digest()
  bool shuffle = false;
  uint64_t seed = 0;
  int batch_size = 1;
  int world_size = 1;
  LastBatch last_batch = LastBatch::kPartial;
  // When `epoch` itself began from a resume: one flag per position of the epoch's global order,
  // 1 if it was consumed before; else empty.
  std::vector<uint8_t> resumed_from;
};

}  // namespace sluice

#endif  // SLUICE_LOADER_STATE_H_
