#include "kernels/filter/filter_gpu.h"

namespace sluice {

namespace {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads) FilterKernel(const GpuFilterSample* samples) {
  const GpuFilterSample& s = samples[blockIdx.y];
  const int64_t p = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (p >= static_cast<int64_t>(s.h) * s.w) return;
  const int y = static_cast<int>(p / s.w), x = static_cast<int>(p - static_cast<int64_t>(y) * s.w);
  const uint8_t* in = s.in;
  const int w = s.w;
  const auto fetch = [in, w](int fx, int fy, uint8_t* px) {
    const uint8_t* q = in + (static_cast<int64_t>(fy) * w + fx) * 3;
    px[0] = __ldg(q), px[1] = __ldg(q + 1), px[2] = __ldg(q + 2);
  };
  uint8_t out[3];
  filter::FilterPixel(s.step, s.w, s.h, x, y, fetch, out);
  uint8_t* o = s.out + p * 3;
  o[0] = out[0], o[1] = out[1], o[2] = out[2];
}

}  // namespace

cudaError_t LaunchFilter(const GpuFilterSample* samples, int num_samples, int64_t max_pixels, cudaStream_t stream) {
  if (num_samples <= 0 || max_pixels <= 0) return cudaSuccess;
  const dim3 grid(static_cast<unsigned>((max_pixels + kThreads - 1) / kThreads), static_cast<unsigned>(num_samples));
  FilterKernel<<<grid, kThreads, 0, stream>>>(samples);
  return cudaGetLastError();
}

}  // namespace sluice
