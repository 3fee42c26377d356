// BatchExecutor: what the Loader drives. The CPU path (Executor) and the GPU path (GpuExecutor)
// implement it; Loader picks one by device.
//
// Thread-safety: StartEpoch/Next from one thread; Stats from any thread.
#ifndef SLUICE_PIPELINE_BATCH_EXECUTOR_H_
#define SLUICE_PIPELINE_BATCH_EXECUTOR_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "io/epoch_schedule.h"
#include "pipeline/stage_counters.h"
#include "sluice/loader.h"
#include "sluice/source.h"

namespace sluice {

class BatchExecutor {
 public:
  virtual ~BatchExecutor() = default;
  // Cancels the work of a previous epoch and starts `schedule`'s epoch at batch `first_batch`
  // (0, or where a resumed run left off). REQUIRES: 0 <= first_batch <= num_batches().
  virtual void StartEpoch(std::shared_ptr<const EpochSchedule> schedule, int64_t first_batch) = 0;
  virtual Result<std::optional<Batch>> Next() = 0;
  virtual LoaderStats Stats() const = 0;
  virtual void ResetStats() = 0;
};

// The labels tensor of a batch of these dataset indices.
inline Tensor BatchLabels(const Source& source, const std::vector<int64_t>& indices) {
  Tensor labels = Tensor::Empty({static_cast<int64_t>(indices.size())}, DType::kInt64);
  int64_t* out = labels.data_as<int64_t>();
  for (size_t k = 0; k < indices.size(); ++k) out[k] = source.samples()[static_cast<size_t>(indices[k])].label;
  return labels;
}

// The end of handing out a batch whose images are set: its labels, indices and padding flags
// (of the samples kept), and the counters.
inline std::optional<Batch> HandOut(Batch out, const Source& source, std::vector<int64_t> indices,
                                    std::vector<uint8_t> padding, StageCounters* counters) {
  out.labels = BatchLabels(source, indices);
  counters->samples.fetch_add(static_cast<int64_t>(indices.size()), std::memory_order_relaxed);
  counters->batches.fetch_add(1, std::memory_order_relaxed);
  out.indices = std::move(indices);
  out.padding = std::move(padding);
  return std::optional<Batch>(std::move(out));
}

}  // namespace sluice

#endif  // SLUICE_PIPELINE_BATCH_EXECUTOR_H_
