// The device pool's usage as a loader's stats report it (the gpu_memory_* fields of LoaderStats):
// one place for the image and the clip executors. gpu_memory_peak is the larger of the peak the
// pool held from the driver and the peak it handed out.
//
// Thread-safety: pure.
#ifndef SLUICE_PIPELINE_GPU_POOL_STATS_H_
#define SLUICE_PIPELINE_GPU_POOL_STATS_H_

#include <algorithm>

#include "gpu/device_pool.h"
#include "sluice/loader_stats.h"

namespace sluice {

inline void FillPoolStats(const DevicePool::Usage& dev, LoaderStats* s) {
  s->gpu_memory_in_use = dev.in_use_bytes;
  s->gpu_memory_peak = std::max(dev.peak_reserved_bytes, dev.peak_bytes);
  s->gpu_memory_reserved = dev.reserved_bytes;
  s->gpu_memory_reserved_nvjpeg = dev.lasting_reserved_bytes;
  s->gpu_memory_allocated = dev.allocated_bytes;
  s->gpu_memory_allocated_nvjpeg = dev.lasting_allocated_bytes;
  s->gpu_pool_overflows = dev.overflow_allocations;
}

}  // namespace sluice

#endif  // SLUICE_PIPELINE_GPU_POOL_STATS_H_
