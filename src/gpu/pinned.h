// Page-locked host memory for uploads: a RawAllocator for HostPool (cudaHostAlloc), so that
// staging buffers are pooled, counted and copied to the GPU asynchronously; and the allocator
// the GPU path reads encoded files with.
//
// Thread-safety: both functions may be called from any thread.
#ifndef SLUICE_GPU_PINNED_H_
#define SLUICE_GPU_PINNED_H_

#include "core/host_pool.h"

namespace sluice {

RawAllocator PinnedAllocator();

// Where the GPU path reads encoded files to: the system's memory (RawAllocator{}), or, with the
// experiment knob SLUICE_READ_PINNED=1, page-locked memory. nvJPEG's hardware backend copies each
// bitstream straight from the caller's memory to the GPU, and DALI stages its input into
// page-locked memory for it (DALI pull requests 2655 and 3956); the knob asks whether sluice's
// engine calls gain the same. Page-locked bytes are safe to copy from asynchronously: a batch's
// file buffers go back to the pool from a host callback on the batch's stream, after it has
// waited for the engines' event (ReleaseBatch). Measured: `auto` +18-25% on 143-KiB files on an
// H100, but the GPU tests hung with it (docs/benchmarks.md), so it stays off until that is found.
RawAllocator FileReadAllocator();

}  // namespace sluice

#endif  // SLUICE_GPU_PINNED_H_
