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
// experiment knob SLUICE_READ_PINNED=1, page-locked memory. DALI's older nvJPEG decoder staged
// its input into page-locked memory before the engines' batched call; the knob asks whether
// sluice's engine calls gain from bitstreams nvJPEG need not stage.
RawAllocator FileReadAllocator();

}  // namespace sluice

#endif  // SLUICE_GPU_PINNED_H_
