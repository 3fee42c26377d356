#include "kernels/warp/warp_gpu.h"

#include <cstring>

#include "kernels/finish/finish_gpu.cuh"

namespace sluice {

namespace {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads)
WarpFinishKernel(const GpuWarpSample* samples, const int32_t* table, GpuFinish f) {
  const GpuWarpSample& s = samples[blockIdx.y];
  const int out_w = s.warp.x.len, out_h = s.warp.y.len;
  const int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p >= static_cast<int64_t>(out_w) * out_h) return;
  const int l = static_cast<int>(p / out_w), k = static_cast<int>(p - static_cast<int64_t>(l) * out_w);
  const int src_w = s.taps_w, src_h = s.taps_h;  // the buffer's pixels (warp.src_x0, src_y0 on)
  const int32_t* x_first = table + s.taps.x_taps;
  const int32_t* x_count = x_first + src_w;
  const int32_t* x_coef = x_count + src_w;
  const int32_t* y_first = table + s.taps.y_taps;
  const int32_t* y_count = y_first + src_h;
  const int32_t* y_coef = y_count + src_h;
  // Resampled pixel (x, y), as ResizeCpu computes it.
  const auto fetch = [&](int x, int y, uint8_t* rgb) {
    const int nx = x_count[x], ny = y_count[y];
    if (nx == 0 || ny == 0) {
      rgb[0] = s.fill[0], rgb[1] = s.fill[1], rgb[2] = s.fill[2];
      return;
    }
    const int32_t* cx = x_coef + static_cast<int64_t>(x) * s.taps.x_stride;
    const int32_t* cy = y_coef + static_cast<int64_t>(y) * s.taps.y_stride;
    const uint8_t* row = s.in + static_cast<int64_t>(y_first[y]) * s.in_pitch + 3 * x_first[x];
    uint32_t a0 = kResizeHalf, a1 = kResizeHalf, a2 = kResizeHalf;
    for (int t = 0; t < ny; ++t, row += s.in_pitch) {
      uint32_t h0 = kResizeHalf, h1 = kResizeHalf, h2 = kResizeHalf;
      const uint8_t* src = row;
      for (int u = 0; u < nx; ++u, src += 3) {
        const int32_t w = cx[u];
        h0 += ResizeMul(src[0], w);
        h1 += ResizeMul(src[1], w);
        h2 += ResizeMul(src[2], w);
      }
      const int32_t w = cy[t];
      a0 += ResizeMul(ResizeClip8(h0), w);
      a1 += ResizeMul(ResizeClip8(h1), w);
      a2 += ResizeMul(ResizeClip8(h2), w);
    }
    rgb[0] = ResizeClip8(a0), rgb[1] = ResizeClip8(a1), rgb[2] = ResizeClip8(a2);
  };
  uint8_t v[3];
  WarpPixel(s.warp, k, l, fetch, v);
  StoreFinished(f, s.out, out_h, out_w, l, k, v, s.erase, s.noise);
}

}  // namespace

void PackWarpSample(const ResizeParams& p, const WarpParams& w, int64_t offset, int32_t* table,
                    ResizeScratch* scratch, GpuWarpSample* s) {
  s->taps = PackTapTables(p, offset, table, scratch);
  s->taps_w = p.x.out_len;
  s->taps_h = p.y.out_len;
  std::memcpy(s->fill, p.fill, sizeof(s->fill));
  s->warp = w;
}

cudaError_t LaunchWarpFinish(const GpuWarpSample* samples, int num_samples, int64_t max_pixels,
                             const int32_t* table, const GpuFinish& finish, cudaStream_t stream) {
  if (num_samples == 0 || max_pixels == 0) return cudaSuccess;
  const dim3 grid(static_cast<unsigned>((max_pixels + kThreads - 1) / kThreads), static_cast<unsigned>(num_samples));
  WarpFinishKernel<<<grid, kThreads, 0, stream>>>(samples, table, finish);
  return cudaGetLastError();
}

}  // namespace sluice
