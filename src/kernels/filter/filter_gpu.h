// GPU filters (GaussianBlur, sharpness, whole-image affine) for a whole batch: one thread per
// output pixel, filter_params.h's per-pixel math, so the bytes match FilterCpu's. Samples may
// have different sizes and filters. The kernel owns nothing: descriptors and images are the
// caller's device memory.
//
// Thread-safety: launches follow CUDA's stream rules.
#ifndef SLUICE_KERNELS_FILTER_FILTER_GPU_H_
#define SLUICE_KERNELS_FILTER_FILTER_GPU_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/filter/filter_params.h"

namespace sluice {

struct GpuFilterSample {
  const uint8_t* in = nullptr;  // RGB8, h rows of w * 3 bytes
  uint8_t* out = nullptr;       // same size; must not overlap `in`
  int h = 0, w = 0;
  FilterStep step;
};

// `samples`: num_samples descriptors in device memory; max_pixels: the largest h * w.
cudaError_t LaunchFilter(const GpuFilterSample* samples, int num_samples, int64_t max_pixels, cudaStream_t stream);

}  // namespace sluice

#endif  // SLUICE_KERNELS_FILTER_FILTER_GPU_H_
