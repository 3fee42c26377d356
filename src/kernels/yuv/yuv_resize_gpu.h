// A YUV 4:2:0 picture (a video frame, device memory) resized and finished in one kernel: each
// input pixel is converted to RGB8 as the resize reads it (yuv_params.h's math) and resampled and
// finished as kernels/resize does, so the output equals YuvToRgbCpu, then ResizeCpu, then
// FinishCpu, byte for byte, without an RGB copy of the frame. The kernel owns nothing.
//
// Thread-safety: launches follow CUDA's stream rules.
#ifndef SLUICE_KERNELS_YUV_YUV_RESIZE_GPU_H_
#define SLUICE_KERNELS_YUV_YUV_RESIZE_GPU_H_

#include <cuda_runtime_api.h>

#include "core/yuv_view.h"
#include "kernels/resize/resize_gpu.h"

namespace sluice {

// Resizes `in` (its planes in device memory) for each of `num_samples` descriptors (device
// memory; their `in` and `in_pitch` are not read, in_h and in_w must be in.height and in.width),
// with at most `max_tiles` tiles each and taps from `table` (device memory), as
// LaunchResizeFinish.
cudaError_t LaunchYuvResizeFinish(const YuvView& in, const GpuResizeSample* samples, int num_samples, int max_tiles,
                                  const int32_t* table, const GpuFinish& finish, cudaStream_t stream);

}  // namespace sluice

#endif  // SLUICE_KERNELS_YUV_YUV_RESIZE_GPU_H_
