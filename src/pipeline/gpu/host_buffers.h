// HostBuffers: the GPU path's pooled host memory. `files`, the buffers encoded files are read
// into: pieces of page-locked blocks (gpu/pinned.h; the system's memory with SLUICE_READ_PINNED=0);
// `staging`, page-locked buffers for uploads. Both pools, their sweep and their part of the
// loader's stats in one place.
//
//   HostBuffers host = HostBuffers::Create();
//   reader reads into host.files->Allocate(n); uploads stage in host.staging
//   host.FillStats(&stats);  // host_memory_* and pinned_memory_* (callers add their own parts)
//
// Thread-safety: the pools may be used from any thread (core/host_pool.h).
// REQUIRES: a CUDA device is current where Create is called.
#ifndef SLUICE_PIPELINE_GPU_HOST_BUFFERS_H_
#define SLUICE_PIPELINE_GPU_HOST_BUFFERS_H_

#include <memory>

#include "core/block_allocator.h"
#include "core/host_pool.h"
#include "sluice/loader_stats.h"

namespace sluice {

struct HostBuffers {
  static HostBuffers Create();

  // Frees what the pools keep idle (as an epoch starts).
  void Sweep();
  // Sets host_memory_* from `files` and pinned_memory_* from `staging` and the files' blocks
  // (reserved for the loader's life: held now and at the peak alike).
  void FillStats(LoaderStats* s) const;

  std::shared_ptr<BlockAllocator> file_blocks;  // where `files` gets its buffers; null: system memory
  std::shared_ptr<HostPool> files;
  std::shared_ptr<HostPool> staging;
};

}  // namespace sluice

#endif  // SLUICE_PIPELINE_GPU_HOST_BUFFERS_H_
