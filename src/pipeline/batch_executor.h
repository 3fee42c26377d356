// BatchExecutor: what the Loader drives. The CPU path (Executor) and the GPU path (GpuExecutor)
// implement it; Loader picks one by device.
//
// Thread-safety: StartEpoch/Next from one thread; Stats from any thread.
#ifndef SLUICE_PIPELINE_BATCH_EXECUTOR_H_
#define SLUICE_PIPELINE_BATCH_EXECUTOR_H_

#include <cstdint>
#include <optional>

#include "sluice/loader.h"

namespace sluice {

class BatchExecutor {
 public:
  virtual ~BatchExecutor() = default;
  virtual int64_t num_batches() const = 0;
  // Cancels the work of a previous epoch and starts epoch `epoch` from its first batch.
  virtual void StartEpoch(int64_t epoch) = 0;
  virtual Result<std::optional<Batch>> Next() = 0;
  virtual LoaderStats Stats() const = 0;
  virtual void ResetStats() = 0;
};

}  // namespace sluice

#endif  // SLUICE_PIPELINE_BATCH_EXECUTOR_H_
