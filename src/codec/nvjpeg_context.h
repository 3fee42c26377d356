// NvjpegContext: the nvJPEG library handles one loader uses (one for the hardware engines where
// the GPU has them, one for the hybrid decoder), with every device buffer nvJPEG allocates taken
// from the loader's DevicePool and its pinned buffers counted, so that the memory budget and the
// reported peak include nvJPEG's own memory. Pinned buffers nvJPEG frees are kept and handed back
// out once the stream that last used them has passed the free. cudaFreeHost waits for the whole
// device (under DDP, for the NCCL kernels of other processes too), so a decode never calls it:
// only SweepPinned does, as an epoch starts, on the consumer's thread.
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
#include <unordered_map>
#include <vector>

#include "codec/engine_turn.h"
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
  // What calls on the hardware handle take turns on: the process's, or with the experiment knob
  // its own (codec/engine_turn.h).
  EngineTurn& engine_turn() { return PerHandleEngineTurns() ? own_turn_ : ProcessEngineTurn(); }
  nvjpegHandle_t hybrid_handle() const { return hybrid_handle_; }

  nvjpegDevAllocatorV2_t* device_allocator() { return &dev_alloc_; }
  nvjpegPinnedAllocatorV2_t* pinned_allocator() { return &pinned_alloc_; }
  int64_t pinned_peak() const { return pinned_peak_.load(); }
  // Pinned bytes held now: handed to nvJPEG, or idle and kept for reuse.
  int64_t pinned_held() const { return pinned_bytes_.load() + idle_bytes_.load(); }
  // Frees the idle pinned buffers nvJPEG has not taken since the previous call (whose last use
  // has passed): a loader calls it as each epoch starts, so that rare sizes do not pile up.
  // cudaFreeHost waits for the device: call it where the caller may wait (not on a worker).
  void SweepPinned();

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
  EngineTurn own_turn_;  // with SLUICE_ENGINE_TURNS=1
  std::atomic<int64_t> pinned_bytes_{0}, pinned_peak_{0}, idle_bytes_{0};
  struct IdlePinned {
    void* p;
    size_t capacity;
    cudaEvent_t freed;  // recorded on the stream nvJPEG freed it on; nullptr: free already
    uint64_t sweep;     // sweeps_ when nvJPEG freed it
  };
  std::mutex pinned_mu_;
  std::vector<IdlePinned> idle_pinned_;  // guarded by pinned_mu_
  std::unordered_map<void*, size_t> pinned_capacity_;  // handed out -> bytes; guarded by pinned_mu_
  uint64_t sweeps_ = 0;                                 // guarded by pinned_mu_
};

}  // namespace sluice

#endif  // SLUICE_CODEC_NVJPEG_CONTEXT_H_
