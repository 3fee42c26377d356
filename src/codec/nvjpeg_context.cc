#include "codec/nvjpeg_context.h"

#include <algorithm>

namespace sluice {

Result<std::unique_ptr<NvjpegContext>> NvjpegContext::Create(DevicePool* pool) {
  SLUICE_ASSIGN_OR_RETURN(const NvjpegApi* api, NvjpegApi::Get());
  std::unique_ptr<NvjpegContext> c(new NvjpegContext());
  c->api_ = api;
  c->pool_ = pool;
  c->dev_alloc_ = nvjpegDevAllocatorV2_t{&DevMalloc, &DevFree, c.get()};
  c->pinned_alloc_ = nvjpegPinnedAllocatorV2_t{&PinnedMalloc, &PinnedFree, c.get()};
  SLUICE_NVJPEG_RETURN_IF_ERROR(api->nvjpegCreateExV2(NVJPEG_BACKEND_DEFAULT, &c->dev_alloc_,
                                                      &c->pinned_alloc_, 0, &c->hybrid_handle_));
  const nvjpegStatus_t s = api->nvjpegCreateExV2(NVJPEG_BACKEND_HARDWARE, &c->dev_alloc_,
                                                 &c->pinned_alloc_, 0, &c->hw_handle_);
  if (s != NVJPEG_STATUS_SUCCESS) {
    c->hw_handle_ = nullptr;
    c->hw_status_ = Unsupported("this GPU has no JPEG decode engines nvJPEG can use (",
                                NvjpegStatusName(s), ")");
  } else {
    unsigned engines = 0, cores = 0;
    if (api->nvjpegGetHardwareDecoderInfo(c->hw_handle_, &engines, &cores) == NVJPEG_STATUS_SUCCESS)
      c->hw_engines_ = static_cast<int>(engines * (cores == 0 ? 1 : cores));
    if (c->hw_engines_ <= 0) c->hw_engines_ = 1;
  }
  return c;
}

NvjpegContext::~NvjpegContext() {
  if (hw_handle_ != nullptr) api_->nvjpegDestroy(hw_handle_);
  if (hybrid_handle_ != nullptr) api_->nvjpegDestroy(hybrid_handle_);
  for (const IdlePinned& b : idle_pinned_) {
    if (b.freed != nullptr) cudaEventDestroy(b.freed);
    cudaFreeHost(b.p);  // the loader is gone: waiting for the device here is harmless
  }
}

int NvjpegContext::DevMalloc(void* ctx, void** p, size_t size, cudaStream_t stream) {
  auto* c = static_cast<NvjpegContext*>(ctx);
  Result<void*> r = c->pool_->Allocate(size, stream, /*enforce_budget=*/false);
  if (!r.ok()) return 1;
  *p = *r;
  return 0;
}

int NvjpegContext::DevFree(void* ctx, void* p, size_t size, cudaStream_t stream) {
  static_cast<NvjpegContext*>(ctx)->pool_->Free(p, size, stream);
  return 0;
}

int NvjpegContext::PinnedMalloc(void* ctx, void** p, size_t size, cudaStream_t) {
  auto* c = static_cast<NvjpegContext*>(ctx);
  *p = nullptr;
  size_t capacity = size == 0 ? 1 : size;
  {
    // The smallest idle buffer of up to twice the size whose last use has passed.
    std::lock_guard<std::mutex> lock(c->pinned_mu_);
    size_t best = c->idle_pinned_.size();
    for (size_t i = 0; i < c->idle_pinned_.size(); ++i) {
      IdlePinned& b = c->idle_pinned_[i];
      if (b.capacity < size || b.capacity > 2 * size + 4096) continue;
      if (b.freed != nullptr) {
        if (cudaEventQuery(b.freed) != cudaSuccess) {
          cudaGetLastError();  // not ready (or an error): not this one
          continue;
        }
        cudaEventDestroy(b.freed);
        b.freed = nullptr;
      }
      if (best == c->idle_pinned_.size() || b.capacity < c->idle_pinned_[best].capacity) best = i;
    }
    if (best < c->idle_pinned_.size()) {
      *p = c->idle_pinned_[best].p;
      capacity = c->idle_pinned_[best].capacity;
      c->idle_pinned_.erase(c->idle_pinned_.begin() + static_cast<std::ptrdiff_t>(best));
      c->idle_bytes_.fetch_sub(static_cast<int64_t>(capacity));
      c->pinned_capacity_[*p] = capacity;
    }
  }
  if (*p == nullptr) {
    if (cudaHostAlloc(p, capacity, cudaHostAllocPortable) != cudaSuccess) {
      cudaGetLastError();
      *p = nullptr;
      return 1;
    }
    std::lock_guard<std::mutex> lock(c->pinned_mu_);
    c->pinned_capacity_[*p] = capacity;
  }
  const int64_t now = c->pinned_bytes_.fetch_add(static_cast<int64_t>(capacity)) + static_cast<int64_t>(capacity);
  int64_t peak = c->pinned_peak_.load();
  while (now > peak && !c->pinned_peak_.compare_exchange_weak(peak, now)) {
  }
  return 0;
}

int NvjpegContext::PinnedFree(void* ctx, void* p, size_t size, cudaStream_t stream) {
  auto* c = static_cast<NvjpegContext*>(ctx);
  if (p == nullptr) return 0;
  // Kept, not freed, at the capacity it was made with. nvJPEG passes the size it asked for, which
  // for a reused buffer can be half its capacity: kept at that size, a buffer would serve ever
  // smaller requests while larger ones allocate anew, and the held memory would creep. Reused
  // once `stream` has passed this point (copies queued on it before the free may still read it).
  cudaEvent_t freed = nullptr;
  if (cudaEventCreateWithFlags(&freed, cudaEventDisableTiming) != cudaSuccess ||
      cudaEventRecord(freed, stream) != cudaSuccess) {
    cudaGetLastError();
    if (freed != nullptr) cudaEventDestroy(freed);
    cudaStreamSynchronize(stream);  // this stream only, not the device
    cudaGetLastError();
    freed = nullptr;
  }
  std::lock_guard<std::mutex> lock(c->pinned_mu_);
  size_t capacity = size;
  if (auto it = c->pinned_capacity_.find(p); it != c->pinned_capacity_.end()) {
    capacity = it->second;
    c->pinned_capacity_.erase(it);
  }
  c->idle_pinned_.push_back(IdlePinned{p, capacity, freed, c->sweeps_});
  c->pinned_bytes_.fetch_sub(static_cast<int64_t>(capacity));
  c->idle_bytes_.fetch_add(static_cast<int64_t>(capacity));
  return 0;
}

void NvjpegContext::SweepPinned() {
  std::vector<IdlePinned> stale;
  {
    std::lock_guard<std::mutex> lock(pinned_mu_);
    auto keep = [&](IdlePinned& b) {
      if (b.sweep == sweeps_) return true;  // freed by nvJPEG since the previous sweep
      if (b.freed != nullptr) {
        if (cudaEventQuery(b.freed) != cudaSuccess) {
          cudaGetLastError();
          return true;  // a copy may still read it
        }
        cudaEventDestroy(b.freed);
        b.freed = nullptr;
      }
      return false;
    };
    const auto kept = std::partition(idle_pinned_.begin(), idle_pinned_.end(), keep);
    for (auto b = kept; b != idle_pinned_.end(); ++b) {
      idle_bytes_.fetch_sub(static_cast<int64_t>(b->capacity));
      stale.push_back(*b);
    }
    idle_pinned_.erase(kept, idle_pinned_.end());
    ++sweeps_;
  }
  for (const IdlePinned& b : stale) cudaFreeHost(b.p);
}

}  // namespace sluice
