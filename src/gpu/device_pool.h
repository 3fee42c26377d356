// DevicePool: stream-ordered device memory (a cudaMemPool of its own) under a byte budget, with
// usage counters. The loader's batches, decoded regions, tables and nvJPEG's buffers all come
// from it, so `peak_reserved` is what sluice holds on the GPU.
//
// Allocation and free are stream-ordered (cudaMallocFromPoolAsync / cudaFreeAsync): memory freed
// on a stream is reused only once the work queued on that stream before the free has finished.
// nvJPEG's buffers (outside the budget, kept for the loader's life) come from a second
// cudaMemPool: mixed with the batches' short-lived blocks they would pin the pool's chunks, and
// its reserve would creep up epoch after epoch.
// A freed block counts against the budget until the work queued on its stream before the free
// has finished, since only then is it the pool's to hand out again without waiting: a consumer's
// stream may run far behind (under DDP it waits in an NCCL collective for the other ranks).
// A request over the budget first waits for such pending frees, oldest first (up to
// kPendingFreeWait); one still over the budget then fails with ResourceExhausted. Callers keep
// within it by admitting work only while there is room.
// The driver would rather grow a pool than reuse a block freed on another stream (under torchrun
// the batches' pool reached 17 GiB for a moment with 0.6 GiB handed out), so the batches' pool
// holds at most the budget (kCapFactor) from the driver: at that size the driver reuses freed
// blocks. A request the capped pool cannot meet (its free blocks too scattered for a large one)
// comes from an uncapped overflow pool, counted in Usage::overflow_allocations.
//
// Thread-safety: all methods may be called from any thread. Buffers handed out through
// shared_ptr (AllocateShared) may outlive the owner of the pool.
#ifndef SLUICE_GPU_DEVICE_POOL_H_
#define SLUICE_GPU_DEVICE_POOL_H_

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "sluice/status.h"

namespace sluice {

class DevicePool : public std::enable_shared_from_this<DevicePool> {
 public:
  // REQUIRES: CheckCudaDevice(device) is OK. budget > 0 (bytes).
  static Result<std::shared_ptr<DevicePool>> Create(int device, int64_t budget);
  ~DevicePool();

  int device() const { return device_; }
  int64_t budget() const { return budget_; }

  // `bytes` of device memory usable on `stream` (and on other streams after they wait on it).
  // `enforce_budget` = false counts the bytes but never fails on the budget (nvJPEG's internal
  // buffers: failing those mid-decode helps no one).
  Result<void*> Allocate(size_t bytes, cudaStream_t stream, bool enforce_budget = true);
  // Returns `p` (of `bytes`) once the work queued on `stream` so far has finished.
  // Counted in use until that point (see above).
  void Free(void* p, size_t bytes, cudaStream_t stream);

  // A buffer freed when the last copy goes: on `release_stream` if a consumer set one (it must
  // then outlive the buffer), else on the pool's own stream; either way after `ready` (the
  // producer's event, owned by the buffer), so that the memory outlives the work writing and
  // reading it, and the producer's streams need not outlive it.
  struct SharedBuffer {
    void* data = nullptr;
    size_t bytes = 0;
    std::atomic<cudaStream_t> release_stream{nullptr};
    cudaEvent_t ready = nullptr;
  };
  Result<std::shared_ptr<SharedBuffer>> AllocateShared(size_t bytes, cudaStream_t stream);

  struct Usage {
    int64_t in_use_bytes = 0;    // handed out, or freed on a stream that has not reached the free
    int64_t peak_bytes = 0;      // highest in_use_bytes
    int64_t reserved_bytes = 0;  // held by the pool from the driver (in use + cached)
    int64_t peak_reserved_bytes = 0;
    int64_t lasting_reserved_bytes = 0;  // nvJPEG's pool's part of reserved_bytes
    // The driver's count of the pools' memory allocated and not yet freed (its frees still
    // pending on their streams count as freed here, unlike in_use_bytes).
    int64_t allocated_bytes = 0;
    int64_t lasting_allocated_bytes = 0;  // nvJPEG's pool's part of allocated_bytes
    int64_t overflow_allocations = 0;     // requests the capped pool could not meet
  };
  Usage usage() const;

  // Returns to the driver the memory the pool caches but does not hand out (freed blocks whose
  // stream work has passed). A loader trims as each epoch starts: the reserve stays what an
  // epoch needs instead of creeping up as blocks fragment.
  void TrimCache();

  // The longest an over-budget request waits for pending frees before it fails.
  static constexpr double kPendingFreeWait = 60.0;  // seconds
  // The most the batches' pool holds from the driver, as a multiple of the budget.
  static constexpr double kCapFactor = 1.0;

 private:
  struct PendingFree {
    cudaEvent_t done;  // recorded on the freeing stream after the free
    int64_t bytes;
  };
  // Counts the pending frees whose streams have passed them as free (any thread).
  void Reap() const;
  // Waits (at most kPendingFreeWait) for the oldest pending free and counts it free; false when
  // none is pending or it did not finish in time.
  bool WaitForOldestFree();
  cudaEvent_t TakeEvent();  // a spare event of this device, or a new one; nullptr on failure

  DevicePool(int device, int64_t budget, cudaMemPool_t pool, cudaMemPool_t overflow, cudaMemPool_t lasting,
             cudaStream_t stream)
      : device_(device), budget_(budget), pool_(pool), overflow_(overflow), lasting_(lasting), stream_(stream) {}

  const int device_;
  const int64_t budget_;
  cudaMemPool_t pool_;      // the batches' blocks (enforce_budget), capped
  cudaMemPool_t overflow_;  // what pool_ cannot meet
  cudaMemPool_t lasting_;   // nvJPEG's (!enforce_budget)
  cudaStream_t stream_;  // releases SharedBuffers no consumer claimed
  mutable std::atomic<int64_t> in_use_{0};
  std::atomic<int64_t> peak_{0};
  std::atomic<int64_t> overflows_{0};
  mutable std::mutex mu_;                      // guards the two lists
  mutable std::vector<PendingFree> pending_;   // oldest first
  mutable std::vector<cudaEvent_t> spare_events_;
};

}  // namespace sluice

#endif  // SLUICE_GPU_DEVICE_POOL_H_
