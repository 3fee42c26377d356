// The finish step's lookup tables (scale, normalize, cast) in device memory, once per executor,
// and the GpuFinish the kernels read them through.
//
// Thread-safety: UploadFinishLut waits for its copies; the tables are then read-only.
#ifndef SLUICE_PIPELINE_GPU_FINISH_LUT_H_
#define SLUICE_PIPELINE_GPU_FINISH_LUT_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "gpu/device_pool.h"
#include "kernels/finish/finish_cpu.h"
#include "kernels/finish/finish_gpu.h"

namespace sluice {

struct DeviceFinishLut {
  uint8_t* data = nullptr;  // from the pool; the executor frees it (bytes)
  size_t bytes = 0;
  GpuFinish finish;
};

// Builds the tables of `params` and copies them to memory from `pool` on `stream` (waited for).
Result<DeviceFinishLut> UploadFinishLut(const FinishParams& params, DevicePool* pool, cudaStream_t stream);

}  // namespace sluice

#endif  // SLUICE_PIPELINE_GPU_FINISH_LUT_H_
