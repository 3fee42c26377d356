#include "kernels/color/color_gpu.h"

#include "kernels/finish/finish_gpu.cuh"

namespace sluice {

namespace {

constexpr int kThreads = 512;

__global__ void __launch_bounds__(kThreads)
ColorFinishKernel(const GpuColorSample* samples, GpuFinish f) {
  __shared__ ColorStats st;
  __shared__ unsigned long long sum;
  __shared__ unsigned int hist[3][256];
  __shared__ int lo[3], hi[3];
  const GpuColorSample& s = samples[blockIdx.x];
  const ColorOps& ops = s.ops;
  const int64_t pixels = static_cast<int64_t>(s.h) * s.w;
  for (int i = 0; i < ops.num_steps; ++i) {
    const ColorKind kind = ops.steps[i].kind;
    if (!NeedsStats(kind)) continue;
    for (int k = threadIdx.x; k < 3 * 256; k += blockDim.x) hist[k / 256][k % 256] = 0;
    if (threadIdx.x < 3) lo[threadIdx.x] = 255, hi[threadIdx.x] = 0;
    if (threadIdx.x == 0) sum = 0;
    __syncthreads();
    unsigned long long mine = 0;
    int my_lo[3] = {255, 255, 255}, my_hi[3] = {0, 0, 0};
    for (int64_t p = threadIdx.x; p < pixels; p += blockDim.x) {
      uint8_t px[3] = {s.in[3 * p], s.in[3 * p + 1], s.in[3 * p + 2]};
      color::ApplySteps(ops, i, st, px);
      if (kind == ColorKind::kContrast) {
        mine += static_cast<unsigned long long>(color::LumaFloor(px));
      } else {
        for (int c = 0; c < 3; ++c) {
          my_lo[c] = min(my_lo[c], static_cast<int>(px[c]));
          my_hi[c] = max(my_hi[c], static_cast<int>(px[c]));
          if (kind == ColorKind::kEqualize) atomicAdd(&hist[c][px[c]], 1u);
        }
      }
    }
    if (kind == ColorKind::kContrast) {
      atomicAdd(&sum, mine);
    } else {
      for (int c = 0; c < 3; ++c) atomicMin(&lo[c], my_lo[c]), atomicMax(&hi[c], my_hi[c]);
    }
    __syncthreads();
    if (kind == ColorKind::kContrast && threadIdx.x == 0) st.mean[i] = color::MeanOf(sum, pixels);
    if (kind == ColorKind::kAutoContrast && threadIdx.x < 3)
      color::AutoContrastStats(lo[threadIdx.x], hi[threadIdx.x], &st.lo[i][threadIdx.x], &st.inv_scale[i][threadIdx.x]);
    if (kind == ColorKind::kEqualize && threadIdx.x < 3) color::EqualizeLut(hist[threadIdx.x], pixels, st.lut[i][threadIdx.x]);
    __syncthreads();
  }
  for (int64_t p = threadIdx.x; p < pixels; p += blockDim.x) {
    uint8_t px[3] = {s.in[3 * p], s.in[3 * p + 1], s.in[3 * p + 2]};
    color::ApplySteps(ops, ops.num_steps, st, px);
    const int y = static_cast<int>(p / s.w), x = static_cast<int>(p - static_cast<int64_t>(y) * s.w);
    StoreFinished(f, s.out, s.h, s.w, y, x, px, s.erase, s.noise);
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
