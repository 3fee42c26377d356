// Page-locked host memory for uploads: a RawAllocator for HostPool (cudaHostAlloc), so that
// staging buffers are pooled, counted and copied to the GPU asynchronously.
//
// Thread-safety: both functions may be called from any thread.
#ifndef SLUICE_GPU_PINNED_H_
#define SLUICE_GPU_PINNED_H_

#include "core/host_pool.h"

namespace sluice {

RawAllocator PinnedAllocator();

}  // namespace sluice

#endif  // SLUICE_GPU_PINNED_H_
