// GPU colour + finish: one kernel for a whole batch, after the resampling kernel has written
// each sample's RGB8 image. A block takes one sample: it finds the statistics its contrast,
// autocontrast and equalize steps need (one read pass each), then runs every colour step on each pixel in registers and writes
// the finished value (scale, normalize, cast, layout) into the sample's slot. Same per-pixel
// code as ApplyColorCpu + FinishCpu (color_params.h), so the bytes match the CPU's.
// The kernel owns nothing: descriptors, images, tables and outputs are the caller's memory.
//
// Thread-safety: launches follow CUDA's stream rules.
#ifndef SLUICE_KERNELS_COLOR_COLOR_GPU_H_
#define SLUICE_KERNELS_COLOR_COLOR_GPU_H_

#include <cuda_runtime_api.h>

#include "kernels/color/color_params.h"
#include "kernels/erase/erase_params.h"
#include "kernels/noise/noise_params.h"
#include "kernels/resize/resize_gpu.h"

namespace sluice {

struct GpuColorSample {
  const uint8_t* in = nullptr;  // RGB8, h rows of w * 3 bytes (device memory)
  void* out = nullptr;          // h * w * 3 elements of the finish dtype and layout; may be `in`
                                // with an RGB8 NHWC finish (the colour steps alone, in place)
  int h = 0, w = 0;
  ColorOps ops;
  const EraseOps* erase = nullptr;  // device memory, or none
  const NoiseParams* noise = nullptr;  // GaussianNoise (device memory), or none
};

// `samples`: num_samples descriptors in device memory.
cudaError_t LaunchColorFinish(const GpuColorSample* samples, int num_samples, const GpuFinish& finish,
                              cudaStream_t stream);

}  // namespace sluice

#endif  // SLUICE_KERNELS_COLOR_COLOR_GPU_H_
