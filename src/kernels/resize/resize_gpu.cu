#include "kernels/resize/resize_gpu.h"

#include <algorithm>
#include <climits>
#include <cstring>

#include "kernels/finish/finish_gpu.cuh"

namespace sluice {

namespace {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads)
ResizeFinishKernel(const GpuResizeSample* samples, const int32_t* table, GpuFinish f) {
  extern __shared__ uint8_t mid[];  // span rows x kGpuTileCols pixels x 3
  __shared__ int s_lo, s_hi;
  const GpuResizeSample& s = samples[blockIdx.y];
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
    const uint8_t* src = s.in + static_cast<int64_t>(lo + r) * s.in_pitch + 3 * x_first[k];
    const int32_t* cf = x_coef + static_cast<int64_t>(k) * s.x_stride;
    uint32_t a0 = kResizeHalf, a1 = kResizeHalf, a2 = kResizeHalf;
    for (int t = 0; t < n; ++t, src += 3) {
      const int32_t w = cf[t];
      a0 += ResizeMul(src[0], w);
      a1 += ResizeMul(src[1], w);
      a2 += ResizeMul(src[2], w);
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

void CopyAxis(const AxisTaps& t, int n, int32_t* dst) {
  std::memcpy(dst, t.first.data(), sizeof(int32_t) * static_cast<size_t>(n));
  std::memcpy(dst + n, t.count.data(), sizeof(int32_t) * static_cast<size_t>(n));
  std::memcpy(dst + 2 * n, t.coef.data(), sizeof(int32_t) * static_cast<size_t>(n) * static_cast<size_t>(t.stride));
}

}  // namespace

TapTables PackTapTables(const ResizeParams& p, int64_t offset, int32_t* table, ResizeScratch* scratch) {
  PrepareTaps(p.x, p.filter, p.antialias, &scratch->x);
  PrepareTaps(p.y, p.filter, p.antialias, &scratch->y);
  const int w = p.x.out_len, h = p.y.out_len;
  CopyAxis(scratch->x, w, table);
  const int64_t x_words = static_cast<int64_t>(2 + scratch->x.stride) * w;
  CopyAxis(scratch->y, h, table + x_words);
  return TapTables{offset, offset + x_words, scratch->x.stride, scratch->y.stride};
}

int64_t ResizeTapWords(const ResizeParams& p) {
  const int64_t sx = MaxTaps(p.x, p.filter, p.antialias), sy = MaxTaps(p.y, p.filter, p.antialias);
  return (2 + sx) * p.x.out_len + (2 + sy) * p.y.out_len;
}

Status PackResizeTaps(const ResizeParams& p, int64_t offset, int32_t* table, ResizeScratch* scratch,
                      GpuResizeSample* s) {
  const TapTables t = PackTapTables(p, offset, table, scratch);
  s->x_taps = t.x_taps;
  s->y_taps = t.y_taps;
  s->x_stride = t.x_stride;
  s->y_stride = t.y_stride;
  const int h = p.y.out_len;
  // The tallest tile whose rows fit in shared memory.
  const int max_rows = kGpuMidBytes / (kGpuTileCols * 3);
  const int32_t* first = scratch->y.first.data();
  const int32_t* count = scratch->y.count.data();
  for (int t = 32; t >= 1; t /= 2) {
    bool fits = true;
    for (int y0 = 0; y0 < h && fits; y0 += t) {
      int lo = INT_MAX, hi = INT_MIN;
      for (int y = y0; y < std::min(h, y0 + t); ++y) {
        if (count[y] == 0) continue;
        lo = std::min(lo, first[y]);
        hi = std::max(hi, first[y] + count[y]);
      }
      fits = lo == INT_MAX || hi - lo <= max_rows;  // all padding: reads nothing
    }
    if (fits) {
      s->tile_rows = t;
      return Status::OK();
    }
  }
  return Unsupported("a resize reading more than ", max_rows, " input rows per output row");
}

cudaError_t LaunchResizeFinish(const GpuResizeSample* samples, int num_samples, int max_tiles,
                               const int32_t* table, const GpuFinish& finish, cudaStream_t stream) {
  if (num_samples == 0 || max_tiles == 0) return cudaSuccess;
  const dim3 grid(static_cast<unsigned>(max_tiles), static_cast<unsigned>(num_samples));
  ResizeFinishKernel<<<grid, kThreads, kGpuMidBytes, stream>>>(samples, table, finish);
  return cudaGetLastError();
}

}  // namespace sluice
