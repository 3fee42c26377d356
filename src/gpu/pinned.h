// Page-locked host memory: staging buffers for uploads (one cudaHostAlloc per pooled buffer), and,
// with the experiment knob SLUICE_READ_PINNED=1, the memory the GPU path reads encoded files into
// (nvJPEG's hardware backend copies each bitstream from the caller's memory, and DALI stages its
// input into page-locked memory for it: DALI pull requests 2655 and 3956). File buffers come in
// pieces of a few large blocks (BlockAllocator), not one cudaHostAlloc per file, and go back to
// the pool from a host callback on the batch's stream once it has waited for the engines' event
// (ReleaseBatch). The knob gains 18-25% on 143-KiB files, but short loaders with it hung in about
// 1 run of 9 in a freshly started GPU machine's first minutes (a stream on the device never
// finishes; docs/benchmarks.md), so it stays off until that is found.
//
// Thread-safety: the functions may be called from any thread; so may the allocators' functions.
#ifndef SLUICE_GPU_PINNED_H_
#define SLUICE_GPU_PINNED_H_

#include "core/host_pool.h"

namespace sluice {

// One cudaHostAlloc per buffer (its `free` waits for the device: not from a host callback).
RawAllocator PinnedAllocator();

// A new BlockAllocator over PinnedAllocator, its first block reserved now; nullptr-returning
// `allocate` once page-locked memory runs out. Its last piece, freed, releases the blocks: a
// loader's pools are destroyed after its streams are synchronized.
RawAllocator PinnedBlocks();

// Where the GPU path reads encoded files to: the system's memory (RawAllocator{}), or PinnedBlocks()
// with SLUICE_READ_PINNED=1.
RawAllocator FileReadAllocator();

}  // namespace sluice

#endif  // SLUICE_GPU_PINNED_H_
