// The resize + finish kernel's body for one block (CUDA code only), over any source of RGB8
// input pixels: resize_gpu.cu reads an RGB8 region (RgbRows); kernels/yuv reads a YUV picture
// and converts each input pixel as it is read, so that no RGB copy of the frame is written. The
// taps, the rounding and the store are the same for all sources: the output equals ResizeCpu
// then FinishCpu on the same RGB8 input.
//
// A source has At(s, y), input row y of sample `s`, whose Pixel(x, rgb) gives input pixel x of
// that row as RGB8. The launch gives kResizeThreads threads a block and kGpuMidBytes of shared memory.
#ifndef SLUICE_KERNELS_RESIZE_RESIZE_GPU_CUH_
#define SLUICE_KERNELS_RESIZE_RESIZE_GPU_CUH_

#include <climits>
#include <cstdint>

#include "kernels/finish/finish_gpu.cuh"
#include "kernels/resize/resize_gpu.h"

namespace sluice {

inline constexpr int kResizeThreads = 256;

// The RGB8 region a descriptor points to.
struct RgbRows {
  struct Line {
    const uint8_t* p;
    __device__ __forceinline__ void Pixel(int x, uint8_t rgb[3]) const {
      const uint8_t* q = p + 3 * x;
      rgb[0] = q[0], rgb[1] = q[1], rgb[2] = q[2];
    }
  };
  __device__ __forceinline__ Line At(const GpuResizeSample& s, int y) const {
    return {s.in + static_cast<int64_t>(y) * s.in_pitch};
  }
};

// Output tile blockIdx.x of sample `s`: the horizontal pass for just the input rows the tile's
// vertical taps read goes to shared memory, then the vertical pass and the finish write it.
template <typename Source>
__device__ __forceinline__ void ResizeFinishTile(const GpuResizeSample& s, const int32_t* table, const GpuFinish& f,
                                                 const Source& source) {
  extern __shared__ uint8_t mid[];  // span rows x kGpuTileCols pixels x 3
  __shared__ int s_lo, s_hi;
  const int out_w = s.out_w, out_h = s.out_h, tile_rows = s.tile_rows;
  const int tiles_x = (out_w + kGpuTileCols - 1) / kGpuTileCols;
  if (static_cast<int>(blockIdx.x) >= tiles_x * ((out_h + tile_rows - 1) / tile_rows)) return;
  const int x0 = (blockIdx.x % tiles_x) * kGpuTileCols, y0 = (blockIdx.x / tiles_x) * tile_rows;
  const int cols = min(kGpuTileCols, out_w - x0), rows = min(tile_rows, out_h - y0);

  const int32_t* x_first = table + s.x_taps;
  const int32_t* x_count = x_first + out_w;
  const int32_t* x_coef = x_count + out_w;
  const int32_t* y_first = table + s.y_taps;
  const int32_t* y_count = y_first + out_h;
  const int32_t* y_coef = y_count + out_h;

  if (threadIdx.x == 0) s_lo = INT_MAX, s_hi = INT_MIN;
  __syncthreads();
  for (int r = threadIdx.x; r < rows; r += blockDim.x) {
    const int n = y_count[y0 + r];
    if (n > 0) {
      atomicMin(&s_lo, y_first[y0 + r]);
      atomicMax(&s_hi, y_first[y0 + r] + n);
    }
  }
  __syncthreads();
  // A tile whose rows are all padding reads nothing. Test the sentinel itself: INT_MIN - INT_MAX
  // overflows, and the compiler may turn "hi > lo ? hi - lo : 0" into max(hi - lo, 0), which then
  // gives 1 (seen with nvcc 13.0: a read of row INT_MAX).
  const int lo = s_lo, span = s_lo == INT_MAX ? 0 : s_hi - s_lo;

  // Horizontal pass over the input rows this tile reads, rounded to 8 bits (as PIL).
  for (int i = threadIdx.x; i < span * cols; i += blockDim.x) {
    const int r = i / cols, c = i - r * cols, k = x0 + c;
    uint8_t* m = mid + (r * kGpuTileCols + c) * 3;
    const int n = x_count[k];
    if (n == 0) {
      m[0] = s.fill[0], m[1] = s.fill[1], m[2] = s.fill[2];
      continue;
    }
    const auto row = source.At(s, lo + r);
    const int first = x_first[k];
    const int32_t* cf = x_coef + static_cast<int64_t>(k) * s.x_stride;
    uint32_t a0 = kResizeHalf, a1 = kResizeHalf, a2 = kResizeHalf;
    for (int t = 0; t < n; ++t) {
      uint8_t p[3];
      row.Pixel(first + t, p);
      const int32_t w = cf[t];
      a0 += ResizeMul(p[0], w);
      a1 += ResizeMul(p[1], w);
      a2 += ResizeMul(p[2], w);
    }
    m[0] = ResizeClip8(a0), m[1] = ResizeClip8(a1), m[2] = ResizeClip8(a2);
  }
  __syncthreads();

  // Vertical pass and finish; consecutive threads write consecutive columns.
  for (int i = threadIdx.x; i < rows * cols; i += blockDim.x) {
    const int r = i / cols, c = i - r * cols, y = y0 + r, x = x0 + c;
    const int n = y_count[y];
    uint8_t v[3];
    if (n == 0 || x_count[x] == 0) {
      v[0] = s.fill[0], v[1] = s.fill[1], v[2] = s.fill[2];
    } else {
      const int32_t* cf = y_coef + static_cast<int64_t>(y) * s.y_stride;
      const uint8_t* m = mid + ((y_first[y] - lo) * kGpuTileCols + c) * 3;
      uint32_t a0 = kResizeHalf, a1 = kResizeHalf, a2 = kResizeHalf;
      for (int t = 0; t < n; ++t, m += kGpuTileCols * 3) {
        const int32_t w = cf[t];
        a0 += ResizeMul(m[0], w);
        a1 += ResizeMul(m[1], w);
        a2 += ResizeMul(m[2], w);
      }
      v[0] = ResizeClip8(a0), v[1] = ResizeClip8(a1), v[2] = ResizeClip8(a2);
    }
    StoreFinished(f, s.out, out_h, out_w, y, x, v, s.erase, s.noise);
  }
}

}  // namespace sluice

#endif  // SLUICE_KERNELS_RESIZE_RESIZE_GPU_CUH_
