#include "gpu/pinned.h"

#include <cuda_runtime_api.h>

#include "core/env_knob.h"

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

RawAllocator FileReadAllocator() {
  static const bool pinned = EnvKnob("SLUICE_READ_PINNED", 0) != 0;
  return pinned ? PinnedAllocator() : RawAllocator{};
}

}  // namespace sluice
