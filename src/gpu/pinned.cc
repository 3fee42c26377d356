#include "gpu/pinned.h"

#include <cuda_runtime_api.h>

namespace sluice {

namespace {
void* PinnedAlloc(size_t bytes) {
  void* p = nullptr;
  if (cudaHostAlloc(&p, bytes, cudaHostAllocPortable) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return p;
}
void PinnedFree(void* p) { cudaFreeHost(p); }
}  // namespace

RawAllocator PinnedAllocator() { return RawAllocator{&PinnedAlloc, &PinnedFree}; }

}  // namespace sluice
