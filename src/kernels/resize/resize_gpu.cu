#include "kernels/resize/resize_gpu.h"

#include <algorithm>
#include <climits>
#include <cstring>

#include "kernels/resize/resize_gpu.cuh"

namespace sluice {

namespace {

__global__ void __launch_bounds__(kResizeThreads)
ResizeFinishKernel(const GpuResizeSample* samples, const int32_t* table, GpuFinish f) {
  ResizeFinishTile(samples[blockIdx.y], table, f, RgbRows{});
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
  ResizeFinishKernel<<<grid, kResizeThreads, kGpuMidBytes, stream>>>(samples, table, finish);
  return cudaGetLastError();
}

}  // namespace sluice
