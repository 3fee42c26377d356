// The GPU filter kernel against the CPU (FilterCpu) on the same images and filters: identical
// bytes, in one launch over samples of different sizes and filter kinds. Skipped without a GPU.
#include "kernels/filter/filter_gpu.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "gpu/device.h"
#include "kernels/filter/filter_cpu.h"
#include "kernels/gpu_kernel_test_util.h"
#include "kernels/filter/gaussian_kernel.h"
#include "kernels/warp/affine_matrix.h"

namespace sluice {
namespace {

TEST(FilterGpu, MatchesTheCpuBytes) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(17);
  std::vector<GpuFilterSample> descs;
  std::vector<std::vector<uint8_t>> inputs, expected;
  std::vector<std::string> names;
  size_t total = 0;
  int64_t max_pixels = 0;
  for (int i = 0; i < 30; ++i) {
    GpuFilterSample d;
    d.w = 1 + static_cast<int>(rng() % 300);
    d.h = 1 + static_cast<int>(rng() % 200);
    FilterStep& f = d.step;
    f.kind = static_cast<FilterKind>(i % 3);
    if (f.kind == FilterKind::kGaussianBlur) {
      f.kx = 1 + 2 * static_cast<int>(rng() % 31);
      f.ky = 1 + 2 * static_cast<int>(rng() % 31);
      const float sigma = 0.1f + static_cast<float>(rng() % 1000) / 100.0f;
      GaussianKernel1d(f.kx, sigma, f.wx);
      GaussianKernel1d(f.ky, sigma, f.wy);
    } else if (f.kind == FilterKind::kSharpness) {
      f.alpha = 1.0f - static_cast<float>(rng() % 2000) / 1000.0f;
    } else {
      AffineParams a;
      a.angle = static_cast<double>(rng() % 360);
      a.shear_x = static_cast<double>(rng() % 60) - 30.0;
      a.tx = static_cast<int>(rng() % 21) - 10;
      const double center[2] = {0.0, 0.0};
      f.warp.enabled = true;
      f.warp.filter = i % 2 ? WarpFilter::kBilinear : WarpFilter::kNearest;
      f.warp.src_w = d.w, f.warp.src_h = d.h;
      f.warp.out_w = d.w, f.warp.out_h = d.h;
      InverseAffineMatrix(a, d.w, d.h, i % 4 == 2 ? center : nullptr, f.warp.m);
      f.warp.fill[0] = 7, f.warp.fill[1] = 70, f.warp.fill[2] = 170;
      f.warp.x = WarpAxis{0, d.w, false};
      f.warp.y = WarpAxis{0, d.h, false};
    }
    std::vector<uint8_t> img(static_cast<size_t>(d.w) * d.h * 3);
    for (uint8_t& v : img) v = static_cast<uint8_t>(rng());
    std::vector<uint8_t> out(img.size());
    std::vector<double> scratch;
    FilterCpu(f, ImageView{img.data(), d.h, d.w, 3, static_cast<ptrdiff_t>(d.w) * 3},
              MutableImageView{out.data(), d.h, d.w, 3, static_cast<ptrdiff_t>(d.w) * 3}, &scratch);
    names.push_back("sample " + std::to_string(i) + " kind " + std::to_string(i % 3) + " " + std::to_string(d.w) +
                    "x" + std::to_string(d.h));
    max_pixels = std::max(max_pixels, static_cast<int64_t>(d.w) * d.h);
    total += img.size();
    descs.push_back(d);
    inputs.push_back(std::move(img));
    expected.push_back(std::move(out));
  }
  gpu_test::DeviceBytes in(total), out(total, 0xCD), table(sizeof(GpuFilterSample) * descs.size());
  size_t off = 0;
  for (size_t i = 0; i < descs.size(); ++i) {
    ASSERT_EQ(cudaMemcpy(in.get() + off, inputs[i].data(), inputs[i].size(), cudaMemcpyHostToDevice), cudaSuccess);
    descs[i].in = in.get() + off;
    descs[i].out = out.get() + off;
    off += inputs[i].size();
  }
  ASSERT_EQ(cudaMemcpy(table.get(), descs.data(), sizeof(GpuFilterSample) * descs.size(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(LaunchFilter(table.as<GpuFilterSample>(), static_cast<int>(descs.size()), max_pixels, nullptr),
            cudaSuccess);
  gpu_test::ExpectOutputsEqual(out, expected, [&](size_t i) { return names[i]; });
}

}  // namespace
}  // namespace sluice
