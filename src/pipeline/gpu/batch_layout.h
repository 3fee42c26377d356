// The memory of one GPU batch, laid out and allocated: the arena of regions the nvJPEG routes
// decode into, the resampled images the pixel passes read and write ("mid"), the output, and the
// descriptor table (pinned on the host, copied to the device at launch) with each kernel's
// per-sample descriptors and the tap tables. TableLayout places the table's parts.
// The table and the arena are allocated when the batch is planned, since its decoders write them;
// mid and the output only when it is launched, since only its kernels write them: a batch being
// decoded (several are, the engines' calls take a while) holds no output yet. With float32
// batches of 256 that is 154 MB a batch.
//
// Thread-safety: functions of one batch, called by the thread that plans it.
#ifndef SLUICE_PIPELINE_GPU_BATCH_LAYOUT_H_
#define SLUICE_PIPELINE_GPU_BATCH_LAYOUT_H_

#include <cstddef>
#include <cstdint>

#include "core/host_pool.h"
#include "gpu/device_pool.h"
#include "pipeline/gpu/gpu_batch.h"
#include "pipeline/plan.h"

namespace sluice {

inline constexpr size_t kGpuAlign = 256;
inline size_t AlignUp(size_t n) { return (n + kGpuAlign - 1) / kGpuAlign * kGpuAlign; }

// Parts of a buffer placed one after another, each aligned.
class TableLayout {
 public:
  // A part of `bytes` bytes; returns its offset.
  size_t Add(size_t bytes) {
    const size_t offset = AlignUp(size_);
    size_ = offset + bytes;
    return offset;
  }
  size_t size() const { return size_; }

 private:
  size_t size_ = 0;
};

// Lays out batch `b`, its samples' routes decided: each good sample's place in the arena
// (nvJPEG routes; their first segment is re-expressed against the region read), in mid and in
// the output, its tap table, and the descriptor table's parts. `sample_bytes`: one output
// sample's bytes (fixed-size plans). Returns the device bytes the batch takes.
int64_t LayOutBatch(GpuBatch* b, const Plan& plan, DType dtype, int64_t sample_bytes);

// Allocates the table and the arena that LayOutBatch sized, on the batch's stream, and records
// b->alloc_ready after them.
Status AllocateBatch(GpuBatch* b, DevicePool* pool, HostPool* pinned);

// Allocates mid and the output, on the batch's stream: at launch, before its kernels are enqueued.
Status AllocateOutputs(GpuBatch* b, DevicePool* pool);

}  // namespace sluice

#endif  // SLUICE_PIPELINE_GPU_BATCH_LAYOUT_H_
