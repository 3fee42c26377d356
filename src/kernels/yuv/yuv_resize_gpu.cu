#include "kernels/yuv/yuv_resize_gpu.h"

#include "kernels/resize/resize_gpu.cuh"
#include "kernels/yuv/yuv_params.h"

namespace sluice {

namespace {

// The picture's rows, converted pixel by pixel (each chroma sample covers its 2x2 pixels).
struct YuvRows {
  YuvView in;
  YuvCoeffs c;
  struct Line {
    const uint8_t* y;
    const uint8_t* u;
    const uint8_t* v;
    int uv_step;
    YuvCoeffs c;
    __device__ __forceinline__ void Pixel(int x, uint8_t rgb[3]) const {
      const int ci = (x >> 1) * uv_step;
      YuvToRgbPixel(c, y[x], u[ci], v[ci], rgb);
    }
  };
  __device__ __forceinline__ Line At(const GpuResizeSample&, int row) const {
    const ptrdiff_t chroma = static_cast<ptrdiff_t>(row >> 1) * in.uv_stride;
    return {in.y + static_cast<ptrdiff_t>(row) * in.y_stride, in.u + chroma, in.v + chroma, in.uv_step, c};
  }
};

__global__ void __launch_bounds__(kResizeThreads)
YuvResizeFinishKernel(const GpuResizeSample* samples, const int32_t* table, GpuFinish f, YuvRows source) {
  ResizeFinishTile(samples[blockIdx.y], table, f, source);
}

}  // namespace

cudaError_t LaunchYuvResizeFinish(const YuvView& in, const GpuResizeSample* samples, int num_samples, int max_tiles,
                                  const int32_t* table, const GpuFinish& finish, cudaStream_t stream) {
  if (num_samples == 0 || max_tiles == 0) return cudaSuccess;
  const dim3 grid(static_cast<unsigned>(max_tiles), static_cast<unsigned>(num_samples));
  YuvResizeFinishKernel<<<grid, kResizeThreads, kGpuMidBytes, stream>>>(
      samples, table, finish, YuvRows{in, MakeYuvCoeffs(in.matrix, in.full_range)});
  return cudaGetLastError();
}

}  // namespace sluice
