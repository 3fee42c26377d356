// The GPU colour + finish kernel against the CPU (ApplyColorCpu then NormalizeCpu) on the same
// images and step lists: identical bytes for every dtype and layout, in one launch over samples
// of different sizes and step lists. Skipped without a GPU.
#include "kernels/color/color_gpu.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "gpu/device.h"
#include "kernels/color/color_cpu.h"
#include "kernels/normalize/normalize_cpu.h"

namespace sluice {
namespace {

#define CUDA_OK(expr) ASSERT_EQ((expr), cudaSuccess) << #expr

struct Case {
  std::vector<uint8_t> pixels;
  int w = 0, h = 0;
  ColorOps ops;
};

std::vector<Case> MakeCases(int count) {
  std::mt19937 rng(99);
  const ColorKind kinds[] = {ColorKind::kBrightness, ColorKind::kContrast, ColorKind::kSaturation,
                             ColorKind::kHue, ColorKind::kGrayscale};
  std::vector<Case> cases;
  for (int i = 0; i < count; ++i) {
    Case c;
    c.w = 9 + static_cast<int>(rng() % 400);
    c.h = 7 + static_cast<int>(rng() % 300);
    c.pixels.resize(static_cast<size_t>(c.w) * c.h * 3);
    for (size_t k = 0; k < c.pixels.size(); ++k)
      c.pixels[k] = static_cast<uint8_t>((k * 13 + (k / 3) % 241 + rng() % 48) & 0xFF);
    const int n = i % 6;  // 0..5 steps, the first sample none
    for (int s = 0; s < n; ++s) {
      const ColorKind kind = kinds[rng() % 5];
      std::uniform_real_distribution<float> f(0.f, 2.f), hue(-0.5f, 0.5f);
      const float factor = kind == ColorKind::kHue ? hue(rng) : f(rng);
      c.ops.steps[c.ops.num_steps++] = ColorStep{kind, factor, static_cast<float>(1.0 - static_cast<double>(factor))};
      if (kind == ColorKind::kContrast) ++c.ops.num_contrast;
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

void RunCompare(DType dtype, Layout layout, bool normalize) {
  const std::vector<Case> cases = MakeCases(24);
  NormalizeParams np;
  np.dtype = dtype;
  np.layout = layout;
  np.normalize = normalize;
  const float mean[3] = {0.5f, 0.5f, 0.5f}, stdv[3] = {0.5f, 0.5f, 0.5f};
  for (int c = 0; c < 3; ++c) np.mean[c] = mean[c], np.std[c] = stdv[c];
  const NormalizeLut lut = NormalizeLut::Build(np);
  const size_t es = DTypeSize(dtype);

  std::vector<std::vector<uint8_t>> expected;
  size_t in_total = 0, out_total = 0;
  for (const Case& c : cases) {
    std::vector<uint8_t> px = c.pixels;
    const MutableImageView v{px.data(), c.h, c.w, 3, static_cast<ptrdiff_t>(c.w) * 3};
    ApplyColorCpu(c.ops, v);
    std::vector<uint8_t> out(px.size() * es);
    NormalizeCpu(np, lut, v, out.data());
    expected.push_back(std::move(out));
    in_total += px.size();
    out_total += expected.back().size();
  }
  uint8_t *d_in, *d_out, *d_lut;
  GpuColorSample* d_desc;
  CUDA_OK(cudaMalloc(&d_in, in_total));
  CUDA_OK(cudaMalloc(&d_out, out_total));
  CUDA_OK(cudaMemset(d_out, 0xA5, out_total));  // poison: every element must be written
  CUDA_OK(cudaMalloc(&d_desc, sizeof(GpuColorSample) * cases.size()));
  CUDA_OK(cudaMalloc(&d_lut, sizeof(lut.f32) + sizeof(lut.f16)));
  CUDA_OK(cudaMemcpy(d_lut, lut.f32, sizeof(lut.f32), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(d_lut + sizeof(lut.f32), lut.f16, sizeof(lut.f16), cudaMemcpyHostToDevice));
  std::vector<GpuColorSample> desc(cases.size());
  size_t in_off = 0, out_off = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    CUDA_OK(cudaMemcpy(d_in + in_off, cases[i].pixels.data(), cases[i].pixels.size(), cudaMemcpyHostToDevice));
    desc[i] = GpuColorSample{d_in + in_off, d_out + out_off, cases[i].h, cases[i].w, cases[i].ops};
    in_off += cases[i].pixels.size();
    out_off += expected[i].size();
  }
  CUDA_OK(cudaMemcpy(d_desc, desc.data(), sizeof(GpuColorSample) * desc.size(), cudaMemcpyHostToDevice));
  const GpuFinish f{dtype, layout, reinterpret_cast<const float*>(d_lut),
                    reinterpret_cast<const uint16_t*>(d_lut + sizeof(lut.f32))};
  CUDA_OK(LaunchColorFinish(d_desc, static_cast<int>(cases.size()), f, nullptr));
  CUDA_OK(cudaDeviceSynchronize());
  std::vector<uint8_t> got(out_total);
  CUDA_OK(cudaMemcpy(got.data(), d_out, out_total, cudaMemcpyDeviceToHost));
  out_off = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(std::memcmp(got.data() + out_off, expected[i].data(), expected[i].size()), 0)
        << "sample " << i << " (" << cases[i].w << "x" << cases[i].h << ", " << cases[i].ops.num_steps
        << " steps) differs, dtype " << DTypeName(dtype) << " layout " << LayoutName(layout);
    out_off += expected[i].size();
  }
  for (void* p : {static_cast<void*>(d_in), static_cast<void*>(d_out), static_cast<void*>(d_desc),
                  static_cast<void*>(d_lut)})
    cudaFree(p);
}

TEST(ColorGpu, MatchesCpuForEveryDtypeAndLayout) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  RunCompare(DType::kUInt8, Layout::kNHWC, false);
  RunCompare(DType::kUInt8, Layout::kNCHW, false);
  RunCompare(DType::kFloat32, Layout::kNCHW, true);
  RunCompare(DType::kFloat16, Layout::kNHWC, true);
}

}  // namespace
}  // namespace sluice
