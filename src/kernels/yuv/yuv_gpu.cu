#include "kernels/yuv/yuv_gpu.h"

#include "kernels/yuv/yuv_params.h"

namespace sluice {

namespace {

__global__ void YuvToRgbKernel(YuvView in, YuvCoeffs c, uint8_t* out, ptrdiff_t out_stride) {
  const int x = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int y = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (x >= in.width || y >= in.height) return;
  const ptrdiff_t ci = (y / 2) * in.uv_stride + (x / 2) * in.uv_step;
  YuvToRgbPixel(c, in.y[y * in.y_stride + x], in.u[ci], in.v[ci], out + y * out_stride + x * 3);
}

}  // namespace

cudaError_t LaunchYuvToRgb(const YuvView& in, uint8_t* out, ptrdiff_t out_stride, cudaStream_t stream) {
  if (in.width <= 0 || in.height <= 0) return cudaSuccess;
  const dim3 block(32, 8);
  const dim3 grid((static_cast<unsigned>(in.width) + block.x - 1) / block.x,
                  (static_cast<unsigned>(in.height) + block.y - 1) / block.y);
  YuvToRgbKernel<<<grid, block, 0, stream>>>(in, MakeYuvCoeffs(in.matrix, in.full_range), out, out_stride);
  return cudaGetLastError();
}

}  // namespace sluice
