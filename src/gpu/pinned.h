// Page-locked host memory: staging buffers for uploads (one cudaHostAlloc per pooled buffer), and
// the memory the GPU path reads encoded files into (nvJPEG's hardware backend copies each
// bitstream from the caller's memory, and DALI stages its input into page-locked memory for it:
// DALI pull requests 2655 and 3956; experiment knob SLUICE_READ_PINNED=0: the system's memory).
// File buffers come in pieces of a few large blocks (BlockAllocator), not one cudaHostAlloc per
// file, and go back to the pool from a host callback on the batch's stream once it has waited for
// the engines' event (ReleaseBatch). This gains 18-25% on 143-KiB files; it hung short loaders now
// and then until the host waited for the engines' last call before the next (EngineWait in
// codec/nvjpeg_decoders.cc; docs/benchmarks.md).
//
// Thread-safety: the functions may be called from any thread; so may the allocators' functions.
#ifndef SLUICE_GPU_PINNED_H_
#define SLUICE_GPU_PINNED_H_

#include <memory>

#include "core/block_allocator.h"
#include "core/host_pool.h"

namespace sluice {

// One cudaHostAlloc per buffer (its `free` waits for the device: not from a host callback).
RawAllocator PinnedAllocator();

// A new BlockAllocator over PinnedAllocator, its first block reserved now; its pieces are nullptr
// once page-locked memory runs out. Its blocks go back when the last holder lets go (a loader's
// pools are destroyed after its streams are synchronized).
std::shared_ptr<BlockAllocator> PinnedBlocks();

// The blocks the GPU path reads encoded files into: PinnedBlocks(), or nullptr (the system's
// memory) with SLUICE_READ_PINNED=0.
std::shared_ptr<BlockAllocator> FileReadBlocks();

// A RawAllocator over `blocks`, or the system's memory (RawAllocator{}) where it is nullptr.
RawAllocator FileReadAllocator(const std::shared_ptr<BlockAllocator>& blocks);

}  // namespace sluice

#endif  // SLUICE_GPU_PINNED_H_
