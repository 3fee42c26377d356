// GPU resample + warp + finish: one kernel for a batch of samples whose last segment has a
// rotation or affine warp. One thread per output pixel: the warp (warp_params.h) picks the
// source points, and each source pixel the warp reads is the segment's resampled image there,
// computed on the spot from the decoded region with the resize's tap tables (PIL's fixed-point
// filter, horizontal sums rounded to 8 bits, then vertical), so the resampled image is never
// written out. Then the finish step (or RGB8 out, when colour steps follow). The output is
// bit-identical to ResizeCpu, WarpCpu and FinishCpu in turn on the same input.
//
// The kernel owns nothing: descriptors, tap tables, lookup tables and outputs are the caller's
// device memory.
//
// Thread-safety: PackWarpSample is reentrant; launches follow CUDA's stream rules.
#ifndef SLUICE_KERNELS_WARP_WARP_GPU_H_
#define SLUICE_KERNELS_WARP_WARP_GPU_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/resize/resize_gpu.h"
#include "kernels/warp/warp_params.h"

namespace sluice {

struct GpuWarpSample {
  const uint8_t* in = nullptr;  // RGB8 decoded region, in_h rows of in_pitch bytes
  int64_t in_pitch = 0;
  int in_h = 0, in_w = 0;
  void* out = nullptr;  // warp.y.len x warp.x.len pixels of the finish dtype and layout
  TapTables taps;       // the resample's tables: taps_w and taps_h entries
  int taps_w = 0, taps_h = 0;  // the resample's output: the warp's source, or its window
  uint8_t fill[3] = {0, 0, 0};  // the resample's padding
  WarpParams warp;
  const EraseOps* erase = nullptr;  // erased rectangles (device memory), or none
  const NoiseParams* noise = nullptr;  // GaussianNoise (device memory), or none
};

// Fills s's taps, fill and warp for segment (p, w); the tables go at `table` (ResizeTapWords(p)
// words, host memory), word `offset` of the batch's table. The caller sets in, in_pitch, in_h,
// in_w and out.
void PackWarpSample(const ResizeParams& p, const WarpParams& w, int64_t offset, int32_t* table,
                    ResizeScratch* scratch, GpuWarpSample* s);

// Launches the kernel for `num_samples` descriptors (device memory), whose outputs have at most
// `max_pixels` pixels each, reading taps from `table` (device memory).
cudaError_t LaunchWarpFinish(const GpuWarpSample* samples, int num_samples, int64_t max_pixels,
                             const int32_t* table, const GpuFinish& finish, cudaStream_t stream);

}  // namespace sluice

#endif  // SLUICE_KERNELS_WARP_WARP_GPU_H_
