#include "gpu/device_pool.h"

#include <chrono>
#include <thread>

#include "core/env_knob.h"
#include "gpu/cuda_util.h"

namespace sluice {

namespace {
constexpr double kMiB = 1024.0 * 1024.0;
}

Result<std::shared_ptr<DevicePool>> DevicePool::Create(int device, int64_t budget) {
  if (budget <= 0) return InvalidArgument("gpu_memory_budget must be > 0 bytes, got ", budget);
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  // SLUICE_POOL_CAP: another factor for the experiment that compares it (0: uncapped).
  static const double cap_factor = EnvKnob("SLUICE_POOL_CAP", kCapFactor);
  cudaMemPool_t pools[3] = {nullptr, nullptr, nullptr};  // batches (capped), overflow, nvJPEG's
  cudaStream_t stream = nullptr;
  cudaError_t e = cudaSuccess;
  for (cudaMemPool_t& pool : pools) {
    props.maxSize = &pool == &pools[0] && cap_factor > 0 ? static_cast<size_t>(cap_factor * static_cast<double>(budget)) : 0;
    if (e == cudaSuccess) e = cudaMemPoolCreate(&pool, &props);
    if (e != cudaSuccess && props.maxSize != 0) {  // a driver that refuses the cap: the overflow pool's behaviour
      cudaGetLastError();
      props.maxSize = 0;
      e = cudaMemPoolCreate(&pool, &props);
    }
    // Keep freed memory cached (up to the budget) instead of returning it at every sync.
    uint64_t threshold = static_cast<uint64_t>(budget);
    if (e == cudaSuccess) cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold);
  }
  if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  if (e != cudaSuccess) {
    for (cudaMemPool_t pool : pools)
      if (pool != nullptr) cudaMemPoolDestroy(pool);
    return CudaStatus(e, "creating the device memory pool");
  }
  return std::shared_ptr<DevicePool>(new DevicePool(device, budget, pools[0], pools[1], pools[2], stream));
}

DevicePool::~DevicePool() {
  // Buffers still handed out keep the pool alive through shared_from_this, so none remain.
  cudaDeviceSynchronize();
  for (const PendingFree& f : pending_) cudaEventDestroy(f.done);
  for (cudaEvent_t e : spare_events_) cudaEventDestroy(e);
  cudaStreamDestroy(stream_);
  for (cudaMemPool_t pool : {pool_, overflow_, lasting_}) cudaMemPoolDestroy(pool);
}

Result<void*> DevicePool::Allocate(size_t bytes, cudaStream_t stream, bool enforce_budget) {
  const int64_t n = static_cast<int64_t>(bytes);
  Reap();
  int64_t now = in_use_.fetch_add(n) + n;
  while (enforce_budget && now > budget_) {
    in_use_.fetch_sub(n);
    if (!WaitForOldestFree())
      return ResourceExhausted("gpu_memory_budget exceeded: ", static_cast<double>(n) / kMiB,
                               " MiB more would make ", static_cast<double>(now) / kMiB,
                               " MiB in use, over the budget of ",
                               static_cast<double>(budget_) / kMiB, " MiB");
    Reap();  // others may have finished meanwhile
    now = in_use_.fetch_add(n) + n;
  }
  int64_t peak = peak_.load();
  while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
  }
  void* p = nullptr;
  const size_t size = bytes == 0 ? 1 : bytes;
  cudaError_t e = cudaMallocFromPoolAsync(&p, size, enforce_budget ? pool_ : lasting_, stream);
  if (e == cudaErrorMemoryAllocation && enforce_budget) {
    cudaGetLastError();
    overflows_.fetch_add(1, std::memory_order_relaxed);
    e = cudaMallocFromPoolAsync(&p, size, overflow_, stream);
  }
  if (e != cudaSuccess) {
    in_use_.fetch_sub(n);
    cudaGetLastError();
    return ResourceExhausted("cannot allocate ", static_cast<double>(n) / kMiB,
                             " MiB of GPU memory: ", cudaGetErrorString(e));
  }
  return p;
}

void DevicePool::Free(void* p, size_t bytes, cudaStream_t stream) {
  if (p == nullptr) return;
  cudaFreeAsync(p, stream);
  const int64_t n = static_cast<int64_t>(bytes);
  cudaEvent_t done = TakeEvent();
  std::lock_guard<std::mutex> lock(mu_);
  if (done != nullptr && cudaEventRecord(done, stream) == cudaSuccess) {
    pending_.push_back(PendingFree{done, n});
    return;
  }
  cudaGetLastError();
  if (done != nullptr) spare_events_.push_back(done);
  in_use_.fetch_sub(n);  // without an event to follow it, free at once (as the pool would reuse it)
}

cudaEvent_t DevicePool::TakeEvent() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!spare_events_.empty()) {
      cudaEvent_t e = spare_events_.back();
      spare_events_.pop_back();
      return e;
    }
  }
  int current = -1;
  cudaGetDevice(&current);
  if (current != device_) cudaSetDevice(device_);  // a consumer's thread may free into this pool
  cudaEvent_t e = nullptr;
  if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess) {
    cudaGetLastError();
    e = nullptr;
  }
  if (current != device_ && current >= 0) cudaSetDevice(current);
  return e;
}

void DevicePool::Reap() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t kept = 0;
  for (const PendingFree& f : pending_) {
    if (cudaEventQuery(f.done) == cudaErrorNotReady) {
      cudaGetLastError();  // not an error (as nvjpeg_context clears it too)
      pending_[kept++] = f;
    } else {  // done, or the event failed: the memory is the pool's again either way
      in_use_.fetch_sub(f.bytes);
      spare_events_.push_back(f.done);
    }
  }
  pending_.resize(kept);
}

bool DevicePool::WaitForOldestFree() {
  PendingFree oldest{};
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (pending_.empty()) return false;
    oldest = pending_.front();
    pending_.erase(pending_.begin());
  }
  // Polled rather than cudaEventSynchronize: the stream may belong to a consumer that stopped.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kPendingFreeWait);
  cudaError_t e = cudaErrorNotReady;
  while ((e = cudaEventQuery(oldest.done)) == cudaErrorNotReady && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  if (e != cudaSuccess) cudaGetLastError();
  std::lock_guard<std::mutex> lock(mu_);
  if (e == cudaErrorNotReady) {
    pending_.insert(pending_.begin(), oldest);
    return false;
  }
  in_use_.fetch_sub(oldest.bytes);  // done, or the event failed: the memory is the pool's again either way
  spare_events_.push_back(oldest.done);
  return true;
}

Result<std::shared_ptr<DevicePool::SharedBuffer>> DevicePool::AllocateShared(size_t bytes,
                                                                             cudaStream_t stream) {
  SLUICE_ASSIGN_OR_RETURN(void* p, Allocate(bytes, stream));
  auto self = shared_from_this();
  auto* buf = new SharedBuffer;
  buf->data = p;
  buf->bytes = bytes;
  return std::shared_ptr<SharedBuffer>(buf, [self](SharedBuffer* b) {
    cudaStream_t s = b->release_stream.load();
    if (s == nullptr) s = self->stream_;
    // After the producer's writes even where the consumer read without waiting (a test does):
    // a block freed under a kernel still writing it could be handed out, or trimmed, mid-write.
    if (b->ready != nullptr) cudaStreamWaitEvent(s, b->ready, 0);
    self->Free(b->data, b->bytes, s);
    if (b->ready != nullptr) cudaEventDestroy(b->ready);
    delete b;
  });
}

void DevicePool::TrimCache() {
  for (cudaMemPool_t pool : {pool_, overflow_, lasting_})
    if (cudaMemPoolTrimTo(pool, 0) != cudaSuccess) cudaGetLastError();
}

DevicePool::Usage DevicePool::usage() const {
  Reap();
  Usage u;
  u.in_use_bytes = in_use_.load();
  u.peak_bytes = peak_.load();
  u.overflow_allocations = overflows_.load(std::memory_order_relaxed);
  for (cudaMemPool_t pool : {pool_, overflow_, lasting_}) {  // the peak: the sum of the pools' peaks
    uint64_t v = 0;
    if (cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &v) == cudaSuccess) {
      u.reserved_bytes += static_cast<int64_t>(v);
      if (pool == lasting_) u.lasting_reserved_bytes = static_cast<int64_t>(v);
    }
    if (cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &v) == cudaSuccess)
      u.peak_reserved_bytes += static_cast<int64_t>(v);
    if (cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &v) == cudaSuccess) {
      u.allocated_bytes += static_cast<int64_t>(v);
      if (pool == lasting_) u.lasting_allocated_bytes = static_cast<int64_t>(v);
    }
  }
  return u;
}

}  // namespace sluice
