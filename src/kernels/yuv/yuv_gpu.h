// YUV 4:2:0 (I420 or NV12, device memory) to interleaved RGB8 on the GPU: one thread per pixel,
// yuv_params.h's math, so the bytes equal YuvToRgbCpu's. The kernel owns nothing.
//
// Thread-safety: launches follow CUDA's stream rules.
#ifndef SLUICE_KERNELS_YUV_YUV_GPU_H_
#define SLUICE_KERNELS_YUV_YUV_GPU_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "core/yuv_view.h"

namespace sluice {

// `in`'s planes and `out` (in.height rows of `out_stride` bytes) are device memory.
cudaError_t LaunchYuvToRgb(const YuvView& in, uint8_t* out, ptrdiff_t out_stride, cudaStream_t stream);

}  // namespace sluice

#endif  // SLUICE_KERNELS_YUV_YUV_GPU_H_
