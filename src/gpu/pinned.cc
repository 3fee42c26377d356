#include "gpu/pinned.h"

#include <cuda_runtime_api.h>

#include "core/env_knob.h"

namespace sluice {

namespace {
void* PinnedAlloc(void*, size_t bytes) {
  void* p = nullptr;
  if (cudaHostAlloc(&p, bytes, cudaHostAllocPortable) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return p;
}
void PinnedFree(void*, void* p) { cudaFreeHost(p); }

// The first block: room for a few batches of files at once; later ones grow geometrically.
constexpr size_t kMinBlockBytes = size_t{32} << 20;
}  // namespace

RawAllocator PinnedAllocator() { return RawAllocator{&PinnedAlloc, &PinnedFree, nullptr}; }

std::shared_ptr<BlockAllocator> PinnedBlocks() {
  auto blocks = std::make_shared<BlockAllocator>(PinnedAllocator(), kMinBlockBytes);
  blocks->Reserve();  // a failure shows at the first Allocate
  return blocks;
}

std::shared_ptr<BlockAllocator> FileReadBlocks() {
  static const bool pinned = EnvKnob("SLUICE_READ_PINNED", 1) != 0;
  return pinned ? PinnedBlocks() : nullptr;
}

RawAllocator FileReadAllocator(const std::shared_ptr<BlockAllocator>& blocks) {
  return blocks != nullptr ? BlockAllocator::AsRawAllocator(blocks) : RawAllocator{};
}

}  // namespace sluice
