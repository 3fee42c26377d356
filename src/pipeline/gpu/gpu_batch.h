// GpuBatch: one batch of the GPU path in flight on the batch ring: per sample, what its decode
// needs and produces (GpuSample); per batch, its stream, its device and pinned memory (laid out
// by batch_layout.h), the engines' event, and its timing (for the route scheduler and the trace).
//
// Thread-safety: a sample's fields are written by the one thread working on it (I/O thread, then
// a decoder thread); the batch's by the thread that plans or launches it. `pending` counts the
// parts still running; the thread that brings it to zero goes on with the batch.
#ifndef SLUICE_PIPELINE_GPU_GPU_BATCH_H_
#define SLUICE_PIPELINE_GPU_GPU_BATCH_H_

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "codec/image_info.h"
#include "core/clock.h"
#include "gpu/device_pool.h"
#include "kernels/resize/resize_gpu.h"
#include "kernels/warp/warp_gpu.h"
#include "ops/sample_geometry.h"
#include "pipeline/batch_ring.h"
#include "pipeline/batch_trace.h"

namespace sluice {

struct GpuSample {
  SampleBytes bytes;
  ImageInfo info;
  SampleGeometry geo;
  DecodeRoute route = DecodeRoute::kCpu;
  bool intact = false;         // a JPEG whose bitstream looks whole (checked when it is read)
  Rect roi;                    // hardware / hybrid: the region decoded (full resolution)
  size_t arena_off = 0;        // hardware / hybrid: its place in the batch's arena
  uint8_t* region = nullptr;   // device pixels the kernel reads
  size_t region_bytes = 0;
  bool own_region = false;     // a separate allocation (CPU route), not in the arena
  std::shared_ptr<uint8_t> staging;  // pinned upload buffer (CPU route)
  int64_t taps_off = 0;        // words into the tap table
  int64_t out_off = 0;         // variable-size outputs: byte offset in the output buffer
  int64_t mid_off = 0;         // colour steps: byte offset of its resampled RGB8 image in `mid`
  GpuResizeSample desc;        // out_h and out_w are the output's size in any case
  GpuWarpSample warp_desc;     // used instead of desc when the last segment warps
  bool warped = false;
  bool packed = false;         // desc / warp_desc and taps written for its route (PackSample)
};

// Where the parts of a batch's descriptor table lie (byte offsets; batch_layout.h fills them).
struct BatchTable {
  size_t descs = 0;         // GpuResizeSample per sample
  size_t taps = 0;          // the tap tables (int32 words)
  size_t colors = 0;        // GpuColorSample per sample (plans with colour steps)
  size_t warps = 0;         // GpuWarpSample per sample (plans with warps)
  size_t erases = 0;        // EraseOps per sample (plans that erase)
  size_t noises = 0;        // NoiseParams per sample (plans with noise)
  size_t pass_colors = 0;   // max_filters x samples GpuColorSample (plans with filters)
  size_t pass_filters = 0;  // max_filters x samples GpuFilterSample
  size_t bytes = 0;
};

// When the batch passed its stages, for the trace. It has no CUDA objects, so a host callback
// may own it.
struct BatchTiming {
  BatchTrace::Times trace{};
  void Mark(BatchTrace::Point p) { trace[p].store(NowNs(), std::memory_order_relaxed); }
};

struct GpuBatch : RingBatch {
  ~GpuBatch() override {
    if (alloc_ready != nullptr) cudaEventDestroy(alloc_ready);
    if (hw_done != nullptr) cudaEventDestroy(hw_done);
  }
  std::vector<GpuSample> gpu;  // one per RingBatch::samples entry
  cudaStream_t stream = nullptr;
  std::atomic<int> pending{0};
  std::atomic<bool> sized{false};  // laid out, its decode memory allocated (or failed)
  std::atomic<int64_t> at_launch{0};  // bytes it will allocate at launch (mid and output), not yet in the pool's usage
  BatchTable table;
  std::shared_ptr<uint8_t> table_host;  // pinned: the descriptors and taps, uploaded at launch
  uint8_t* table_dev = nullptr;
  uint8_t* arena = nullptr;    // the regions the nvJPEG routes decode into
  size_t arena_bytes = 0;
  uint8_t* mid = nullptr;      // colour steps: the resampled RGB8 images the colour kernel reads;
  size_t mid_bytes = 0;        // with filters, two images per sample: [0, mid_half), [mid_half, ..)
  size_t mid_half = 0;
  int64_t out_bytes = 0;
  std::shared_ptr<DevicePool::SharedBuffer> output;
  cudaEvent_t alloc_ready = nullptr, hw_done = nullptr;
  bool used_hw = false;
  int64_t route_generation = -1;  // auto mode: the scheduler's generation it was planned in
  std::shared_ptr<BatchTiming> timing = std::make_shared<BatchTiming>();

  // Descriptor `k` of the part at `offset`, in the host table or in its device copy.
  template <typename T>
  T* host(size_t offset, size_t k = 0) const {
    return reinterpret_cast<T*>(table_host.get() + offset) + k;
  }
  template <typename T>
  const T* device(size_t offset, size_t k = 0) const {
    return reinterpret_cast<const T*>(table_dev + offset) + k;
  }
};

}  // namespace sluice

#endif  // SLUICE_PIPELINE_GPU_GPU_BATCH_H_
