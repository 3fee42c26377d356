#include "pipeline/gpu/host_buffers.h"

#include "gpu/pinned.h"

namespace sluice {

HostBuffers HostBuffers::Create() {
  HostBuffers h;
  h.file_blocks = FileReadBlocks();
  h.files = HostPool::Create(FileReadAllocator(h.file_blocks));
  h.staging = HostPool::Create(PinnedAllocator());
  return h;
}

void HostBuffers::Sweep() {
  files->Sweep();
  staging->Sweep();
}

void HostBuffers::FillStats(LoaderStats* s) const {
  const HostPool::Usage host = files->usage();
  s->host_memory_in_use = host.in_use_bytes;
  s->host_memory_peak = host.peak_bytes;
  s->host_memory_cached = host.cached_bytes;
  const HostPool::Usage pinned = staging->usage();
  const int64_t blocks = file_blocks ? static_cast<int64_t>(file_blocks->reserved_bytes()) : 0;
  s->pinned_memory_peak = pinned.peak_bytes + blocks;
  s->pinned_memory_held = pinned.in_use_bytes + pinned.cached_bytes + blocks;
}

}  // namespace sluice
