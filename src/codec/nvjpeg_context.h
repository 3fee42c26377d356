// NvjpegContext: the nvJPEG library handles one loader uses (one for the hardware engines where
// the GPU has them, one for the hybrid decoder), with every device buffer nvJPEG allocates taken
// from the loader's DevicePool and its pinned buffers counted, so that the memory budget and the
// reported peak include nvJPEG's own memory. Pinned buffers nvJPEG frees are kept and handed back
// out once the stream that last used them has passed the free (never cudaFreeHost while the
// loader runs: it waits for the whole device, which under DDP can be held by an NCCL kernel that
// waits for this very process).
//
// Thread-safety: the handles are thread-safe (nvJPEG's rule); the context is immutable after
// Create() except for the pinned-memory counters (atomic) and the pinned cache (locked).
#ifndef SLUICE_CODEC_NVJPEG_CONTEXT_H_
#define SLUICE_CODEC_NVJPEG_CONTEXT_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "codec/nvjpeg_api.h"
#include "gpu/device_pool.h"

namespace sluice {

class NvjpegContext {
 public:
  // REQUIRES: `pool` outlives the context and every decoder made from it.
  static Result<std::unique_ptr<NvjpegContext>> Create(DevicePool* pool);
  ~NvjpegContext();

  const NvjpegApi& api() const { return *api_; }
  // nullptr when the GPU has no JPEG engines (hardware_status() says why).
  nvjpegHandle_t hardware_handle() const { return hw_handle_; }
  const Status& hardware_status() const { return hw_status_; }
  int hardware_engines() const { return hw_engines_; }
  nvjpegHandle_t hybrid_handle() const { return hybrid_handle_; }

  nvjpegDevAllocatorV2_t* device_allocator() { return &dev_alloc_; }
  nvjpegPinnedAllocatorV2_t* pinned_allocator() { return &pinned_alloc_; }
  int64_t pinned_peak() const { return pinned_peak_.load(); }

 private:
  NvjpegContext() = default;
  static int DevMalloc(void* ctx, void** p, size_t size, cudaStream_t stream);
  static int DevFree(void* ctx, void* p, size_t size, cudaStream_t stream);
  static int PinnedMalloc(void* ctx, void** p, size_t size, cudaStream_t stream);
  static int PinnedFree(void* ctx, void* p, size_t size, cudaStream_t stream);

  const NvjpegApi* api_ = nullptr;
  DevicePool* pool_ = nullptr;
  nvjpegDevAllocatorV2_t dev_alloc_{};
  nvjpegPinnedAllocatorV2_t pinned_alloc_{};
  nvjpegHandle_t hw_handle_ = nullptr;
  nvjpegHandle_t hybrid_handle_ = nullptr;
  Status hw_status_;
  int hw_engines_ = 0;
  std::atomic<int64_t> pinned_bytes_{0}, pinned_peak_{0};
  struct IdlePinned {
    void* p;
    size_t size;
    cudaEvent_t freed;  // recorded on the stream nvJPEG freed it on; nullptr: free already
  };
  std::mutex pinned_mu_;
  std::vector<IdlePinned> idle_pinned_;  // guarded by pinned_mu_
};

}  // namespace sluice

#endif  // SLUICE_CODEC_NVJPEG_CONTEXT_H_
