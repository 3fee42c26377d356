#include "gpu/device_pool.h"

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
  cudaMemPool_t pool = nullptr;
  SLUICE_CUDA_RETURN_IF_ERROR(cudaMemPoolCreate(&pool, &props));
  // Keep freed memory cached (up to the budget) instead of returning it at every sync.
  uint64_t threshold = static_cast<uint64_t>(budget);
  cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold);
  cudaStream_t stream = nullptr;
  const cudaError_t e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  if (e != cudaSuccess) {
    cudaMemPoolDestroy(pool);
    return CudaStatus(e, "cudaStreamCreateWithFlags");
  }
  return std::shared_ptr<DevicePool>(new DevicePool(device, budget, pool, stream));
}

DevicePool::~DevicePool() {
  // Buffers still handed out keep the pool alive through shared_from_this, so none remain.
  cudaDeviceSynchronize();
  cudaStreamDestroy(stream_);
  cudaMemPoolDestroy(pool_);
}

Result<void*> DevicePool::Allocate(size_t bytes, cudaStream_t stream, bool enforce_budget) {
  const int64_t n = static_cast<int64_t>(bytes);
  const int64_t now = in_use_.fetch_add(n) + n;
  if (enforce_budget && now > budget_) {
    in_use_.fetch_sub(n);
    return ResourceExhausted("gpu_memory_budget exceeded: ", static_cast<double>(n) / kMiB,
                             " MiB more would make ", static_cast<double>(now) / kMiB,
                             " MiB in use, over the budget of ",
                             static_cast<double>(budget_) / kMiB, " MiB");
  }
  for (std::atomic<int64_t>* p : {&peak_, &trim_peak_}) {
    int64_t peak = p->load();
    while (now > peak && !p->compare_exchange_weak(peak, now)) {
    }
  }
  void* p = nullptr;
  const cudaError_t e = cudaMallocFromPoolAsync(&p, bytes == 0 ? 1 : bytes, pool_, stream);
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
  in_use_.fetch_sub(static_cast<int64_t>(bytes));
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
    if (s == nullptr) {
      s = self->stream_;
      if (b->ready != nullptr) cudaStreamWaitEvent(s, b->ready, 0);
    }
    self->Free(b->data, b->bytes, s);
    if (b->ready != nullptr) cudaEventDestroy(b->ready);
    delete b;
  });
}

void DevicePool::TrimCache() {
  const int64_t keep = trim_peak_.exchange(in_use_.load());
  if (cudaMemPoolTrimTo(pool_, static_cast<size_t>(keep)) != cudaSuccess) cudaGetLastError();
}

DevicePool::Usage DevicePool::usage() const {
  Usage u;
  u.in_use_bytes = in_use_.load();
  u.peak_bytes = peak_.load();
  uint64_t v = 0;
  if (cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReservedMemCurrent, &v) == cudaSuccess)
    u.reserved_bytes = static_cast<int64_t>(v);
  if (cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReservedMemHigh, &v) == cudaSuccess)
    u.peak_reserved_bytes = static_cast<int64_t>(v);
  return u;
}

}  // namespace sluice
