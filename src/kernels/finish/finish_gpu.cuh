// The finish step's store on the GPU (CUDA code only): one RGB8 pixel, scaled, normalized, cast
// and laid out into a sample's slot with FinishLut's tables, as FinishCpu writes it, with
// the sample's erased rectangles and grid (as ErasePixelsCpu, then EraseFinishedCpu) and its
// noise (as NoiseFinishCpu). The GPU kernels
// that end a sample's processing share it.
#ifndef SLUICE_KERNELS_FINISH_FINISH_GPU_CUH_
#define SLUICE_KERNELS_FINISH_FINISH_GPU_CUH_

#include <cstdint>

#include "core/half.h"
#include "kernels/erase/erase_params.h"
#include "kernels/noise/noise_params.h"
#include "kernels/finish/finish_gpu.h"
#include "kernels/finish/finish_params.h"

namespace sluice {

// `erase` (may be null): the sample's erased rectangles and grid, applied as ErasePixel says;
// `noise` (may be null): its GaussianNoise (float outputs), computed as noise::Value says.
__device__ __forceinline__ void StoreFinished(const GpuFinish& f, void* out, int h, int w, int y, int x,
                                              const uint8_t in[3], const EraseOps* erase = nullptr,
                                              const NoiseParams* noise = nullptr) {
  uint8_t v[3] = {in[0], in[1], in[2]};
  float erased[3];
  const float* e = erase != nullptr && ErasePixel(*erase, x, y, w, v, erased) ? erased : nullptr;
  float z[3] = {0.f, 0.f, 0.f};
  if (noise != nullptr && e == nullptr) noise::Normals(*noise, static_cast<int64_t>(y) * w + x, z);
#pragma unroll
  for (int c = 0; c < 3; ++c) {
    const int64_t o = SlotOffset(f.layout, h, w, c, y, x);
    float value = 0.f;
    if (e != nullptr) {
      value = e[c];
    } else if (noise != nullptr) {
      value = noise::Value(*noise, v[c], c, z[c]);
    }
    const bool computed = e != nullptr || noise != nullptr;
    switch (f.dtype) {
      case DType::kUInt8: static_cast<uint8_t*>(out)[o] = computed ? ErasedU8(value) : v[c]; break;
      case DType::kFloat32: static_cast<float*>(out)[o] = computed ? value : f.lut_f32[c * 256 + v[c]]; break;
      default: static_cast<uint16_t*>(out)[o] = computed ? FloatToHalfBits(value) : f.lut_f16[c * 256 + v[c]]; break;
    }
  }
}

}  // namespace sluice

#endif  // SLUICE_KERNELS_FINISH_FINISH_GPU_CUH_
