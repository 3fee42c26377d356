// The finish step on the GPU, as its kernels' callers see it: the parameters a kernel that writes
// finished samples takes (StoreFinished in finish_gpu.cuh is the per-pixel code they share).
//
// Thread-safety: plain values.
#ifndef SLUICE_KERNELS_FINISH_FINISH_GPU_H_
#define SLUICE_KERNELS_FINISH_FINISH_GPU_H_

#include <cstdint>

#include "sluice/types.h"

namespace sluice {

// The finish step's parameters for the kernel: dtype, layout and FinishLut's tables
// (3 x 256 float32 and float16 words, in device memory).
struct GpuFinish {
  DType dtype = DType::kFloat32;
  Layout layout = Layout::kNCHW;
  const float* lut_f32 = nullptr;
  const uint16_t* lut_f16 = nullptr;
};

}  // namespace sluice

#endif  // SLUICE_KERNELS_FINISH_FINISH_GPU_H_
