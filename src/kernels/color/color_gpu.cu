#include "kernels/color/color_gpu.h"

#include "kernels/normalize/finish_gpu.cuh"

namespace sluice {

namespace {

constexpr int kThreads = 512;

__global__ void __launch_bounds__(kThreads)
ColorFinishKernel(const GpuColorSample* samples, GpuFinish f) {
  __shared__ float means[ColorOps::kMaxSteps];
  __shared__ unsigned long long sum;
  const GpuColorSample& s = samples[blockIdx.x];
  const ColorOps& ops = s.ops;
  const int64_t pixels = static_cast<int64_t>(s.h) * s.w;
  int k = 0;
  for (int i = 0; i < ops.num_steps; ++i) {
    if (ops.steps[i].kind != ColorKind::kContrast) continue;
    if (threadIdx.x == 0) sum = 0;
    __syncthreads();
    unsigned long long mine = 0;
    for (int64_t p = threadIdx.x; p < pixels; p += blockDim.x) {
      uint8_t px[3] = {s.in[3 * p], s.in[3 * p + 1], s.in[3 * p + 2]};
      color::ApplySteps(ops, i, means, px);
      mine += static_cast<unsigned long long>(color::LumaFloor(px));
    }
    atomicAdd(&sum, mine);
    __syncthreads();
    if (threadIdx.x == 0) means[k] = color::MeanOf(sum, pixels);
    ++k;
    __syncthreads();
  }
  for (int64_t p = threadIdx.x; p < pixels; p += blockDim.x) {
    uint8_t px[3] = {s.in[3 * p], s.in[3 * p + 1], s.in[3 * p + 2]};
    color::ApplySteps(ops, ops.num_steps, means, px);
    const int y = static_cast<int>(p / s.w), x = static_cast<int>(p - static_cast<int64_t>(y) * s.w);
    StoreFinished(f, s.out, s.h, s.w, y, x, px, s.erase);
  }
}

}  // namespace

cudaError_t LaunchColorFinish(const GpuColorSample* samples, int num_samples, const GpuFinish& finish,
                              cudaStream_t stream) {
  if (num_samples <= 0) return cudaSuccess;
  ColorFinishKernel<<<num_samples, kThreads, 0, stream>>>(samples, finish);
  return cudaGetLastError();
}

}  // namespace sluice
