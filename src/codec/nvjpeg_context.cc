#include "codec/nvjpeg_context.h"

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
  if (cudaHostAlloc(p, size == 0 ? 1 : size, cudaHostAllocPortable) != cudaSuccess) {
    cudaGetLastError();
    return 1;
  }
  const int64_t now = c->pinned_bytes_.fetch_add(static_cast<int64_t>(size)) + static_cast<int64_t>(size);
  int64_t peak = c->pinned_peak_.load();
  while (now > peak && !c->pinned_peak_.compare_exchange_weak(peak, now)) {
  }
  return 0;
}

int NvjpegContext::PinnedFree(void* ctx, void* p, size_t size, cudaStream_t) {
  auto* c = static_cast<NvjpegContext*>(ctx);
  cudaFreeHost(p);  // synchronizes with the device, so no copy still reads it
  c->pinned_bytes_.fetch_sub(static_cast<int64_t>(size));
  return 0;
}

}  // namespace sluice
