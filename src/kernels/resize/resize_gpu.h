// GPU resize + finish: one kernel for a whole batch. Each sample's decoded region (RGB8, any
// size, anywhere in device memory) is resampled with PIL's fixed-point separable filter, the
// same taps and rounding as ResizeCpu (crop, flip and padding ride in the taps), then scaled,
// normalized, cast and laid out into the sample's slot (FinishCpu's tables): the output is
// bit-identical to ResizeCpu followed by FinishCpu on the same input.
//
// A block computes a tile of kTileCols x tile_rows output pixels: the horizontal pass for just
// the input rows the tile's vertical taps read goes to shared memory, then the vertical pass and
// the finish write the output. The kernel owns nothing: descriptors, tap tables, lookup tables
// and outputs are the caller's device memory.
//
// Thread-safety: PackResizeTaps is reentrant; launches follow CUDA's stream rules.
#ifndef SLUICE_KERNELS_RESIZE_RESIZE_GPU_H_
#define SLUICE_KERNELS_RESIZE_RESIZE_GPU_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/erase/erase_params.h"
#include "kernels/noise/noise_params.h"
#include "kernels/finish/finish_gpu.h"
#include "kernels/resize/resize_cpu.h"

namespace sluice {

inline constexpr int kGpuTileCols = 32;
inline constexpr int kGpuMidBytes = 32 * 1024;  // shared memory for a tile's horizontal rows

// One sample, as the kernel reads it (device memory). Tap offsets index the batch's tap table
// (int32 words): first[out_len], count[out_len], coef[out_len * stride] per axis.
struct GpuResizeSample {
  const uint8_t* in = nullptr;  // RGB8 region, in_h rows of in_pitch bytes
  int64_t in_pitch = 0;
  int in_h = 0, in_w = 0;
  void* out = nullptr;          // out_h * out_w * 3 elements of the finish dtype and layout
  int out_h = 0, out_w = 0;
  int64_t x_taps = 0, y_taps = 0;  // offsets of the two axes' tables
  int x_stride = 0, y_stride = 0;
  int tile_rows = 0;               // output rows per block, 1..32
  uint8_t fill[3] = {0, 0, 0};
  const EraseOps* erase = nullptr;  // erased rectangles (device memory), or none
  const NoiseParams* noise = nullptr;  // GaussianNoise (device memory), or none
};

// Words of tap table one sample with these parameters needs.
int64_t ResizeTapWords(const ResizeParams& p);

// Where a sample's two tap tables lie in the batch's table, and their strides.
struct TapTables {
  int64_t x_taps = 0, y_taps = 0;
  int x_stride = 0, y_stride = 0;
};

// Writes the sample's x then y tap tables at `table` (ResizeTapWords(p) words, host memory),
// which is word `offset` of the batch's table, using `scratch`.
TapTables PackTapTables(const ResizeParams& p, int64_t offset, int32_t* table, ResizeScratch* scratch);

// Writes the sample's two tap tables at `table` (ResizeTapWords(p) words, host memory) using
// `scratch`, and sets s->x_stride, y_stride and tile_rows; s->x_taps / y_taps are set to
// `offset` and `offset` + the x table's size. Fails (Unsupported) when even one output row reads
// more input rows than a block's shared memory holds (a downscale of over ~170x on one axis).
Status PackResizeTaps(const ResizeParams& p, int64_t offset, int32_t* table, ResizeScratch* scratch,
                      GpuResizeSample* s);

// Launches the kernel for `num_samples` descriptors (device memory) whose tiles number at most
// `max_tiles` per sample, reading taps from `table` (device memory).
cudaError_t LaunchResizeFinish(const GpuResizeSample* samples, int num_samples, int max_tiles,
                               const int32_t* table, const GpuFinish& finish, cudaStream_t stream);

// Tiles of one sample (for max_tiles).
inline int ResizeTiles(const GpuResizeSample& s) {
  return ((s.out_w + kGpuTileCols - 1) / kGpuTileCols) * ((s.out_h + s.tile_rows - 1) / s.tile_rows);
}

}  // namespace sluice

#endif  // SLUICE_KERNELS_RESIZE_RESIZE_GPU_H_
