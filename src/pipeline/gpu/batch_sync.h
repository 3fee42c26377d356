// How a GPU batch is handed over and let go without a host thread waiting for the GPU.
// ReleaseBatch records the output's ready event on the batch's stream and frees what the kernels
// read, stream-ordered, after them (host buffers once the stream has passed that point). A
// batch's output tensors carry a BatchSync: the consumer's stream waits for the ready event, and
// the output's memory is freed on that stream when the last tensor goes.
//
// Thread-safety: ReleaseBatch on the thread that launched the batch; HandOverOutput on the
// thread that hands the batch out; BatchSync::ConsumeOn from any thread.
#ifndef SLUICE_PIPELINE_GPU_BATCH_SYNC_H_
#define SLUICE_PIPELINE_GPU_BATCH_SYNC_H_

#include <memory>
#include <vector>

#include "gpu/device_pool.h"
#include "pipeline/gpu/gpu_batch.h"
#include "pipeline/plan.h"
#include "sluice/batch.h"
#include "sluice/loader_options.h"
#include "sluice/tensor.h"

namespace sluice {

class BatchSync : public DeviceSync {
 public:
  explicit BatchSync(std::shared_ptr<DevicePool::SharedBuffer> buffer) : buffer_(std::move(buffer)) {}
  Status ConsumeOn(uintptr_t stream) override;

 private:
  std::shared_ptr<DevicePool::SharedBuffer> buffer_;
};

// After the batch's kernels are queued (or nothing could be): the output's ready event, and the
// batch's memory back to `pool` and the host pools, stream-ordered.
void ReleaseBatch(GpuBatch* b, DevicePool* pool);

// The output of launched batch `b` as the consumer's tensors, each carrying a BatchSync: one
// tensor of the `kept` samples (plans of one output size), else one tensor per kept sample.
void HandOverOutput(const GpuBatch& b, const std::vector<int>& kept, const Plan& plan, const LoaderOptions& options,
                    Batch* out);

}  // namespace sluice

#endif  // SLUICE_PIPELINE_GPU_BATCH_SYNC_H_
