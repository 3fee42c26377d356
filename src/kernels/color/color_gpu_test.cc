// The GPU colour + finish kernel against the CPU (ApplyColorCpu then FinishCpu) on the same
// images and step lists: identical bytes for every dtype and layout, in one launch over samples
// of different sizes and step lists. Skipped without a GPU.
#include "kernels/color/color_gpu.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <iterator>
#include <random>
#include <vector>

#include "gpu/device.h"
#include "kernels/gpu_kernel_test_util.h"
#include "kernels/color/color_cpu.h"
#include "kernels/finish/finish_cpu.h"

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
  const ColorKind kinds[] = {ColorKind::kBrightness, ColorKind::kContrast,     ColorKind::kSaturation,
                             ColorKind::kHue,        ColorKind::kGrayscale,    ColorKind::kPosterize,
                             ColorKind::kSolarize,   ColorKind::kAutoContrast, ColorKind::kEqualize,
                             ColorKind::kPermute};
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
      const ColorKind kind = kinds[rng() % std::size(kinds)];
      std::uniform_real_distribution<float> f(0.f, 2.f), hue(-0.5f, 0.5f);
      float factor = kind == ColorKind::kHue ? hue(rng) : f(rng);
      if (kind == ColorKind::kPosterize) factor = static_cast<float>((0xFF00 >> (rng() % 9)) & 0xFF);
      if (kind == ColorKind::kPermute) factor = static_cast<float>(rng() % 6);
      if (kind == ColorKind::kSolarize) factor = static_cast<float>(rng() % 256);
      c.ops.steps[c.ops.num_steps++] = ColorStep{kind, factor, static_cast<float>(1.0 - static_cast<double>(factor))};
      if (NeedsStats(kind)) ++c.ops.num_stats;
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

void RunCompare(DType dtype, Layout layout, bool normalize) {
  const std::vector<Case> cases = MakeCases(24);
  const gpu_test::TestFinish fin(dtype, layout, normalize, {0.5f, 0.5f, 0.5f}, {0.5f, 0.5f, 0.5f});

  std::vector<std::vector<uint8_t>> expected;
  size_t in_total = 0, out_total = 0;
  for (const Case& c : cases) {
    std::vector<uint8_t> px = c.pixels;
    const MutableImageView v{px.data(), c.h, c.w, 3, static_cast<ptrdiff_t>(c.w) * 3};
    ApplyColorCpu(c.ops, v);
    std::vector<uint8_t> out(px.size() * fin.element_size());
    FinishCpu(fin.params, fin.lut, v, out.data());
    expected.push_back(std::move(out));
    in_total += px.size();
    out_total += expected.back().size();
  }
  const gpu_test::DeviceBytes d_in(in_total), d_out(out_total, 0xA5), d_desc(sizeof(GpuColorSample) * cases.size());
  std::vector<GpuColorSample> desc(cases.size());
  size_t in_off = 0, out_off = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    CUDA_OK(cudaMemcpy(d_in.get() + in_off, cases[i].pixels.data(), cases[i].pixels.size(), cudaMemcpyHostToDevice));
    desc[i] = GpuColorSample{d_in.get() + in_off, d_out.get() + out_off, cases[i].h, cases[i].w, cases[i].ops};
    in_off += cases[i].pixels.size();
    out_off += expected[i].size();
  }
  CUDA_OK(cudaMemcpy(d_desc.get(), desc.data(), sizeof(GpuColorSample) * desc.size(), cudaMemcpyHostToDevice));
  CUDA_OK(LaunchColorFinish(d_desc.as<GpuColorSample>(), static_cast<int>(cases.size()), fin.gpu, nullptr));
  gpu_test::ExpectOutputsEqual(d_out, expected, [&](size_t i) {
    return "sample " + std::to_string(i) + " (" + std::to_string(cases[i].w) + "x" + std::to_string(cases[i].h) +
           ", " + std::to_string(cases[i].ops.num_steps) + " steps) differs, dtype " + DTypeName(dtype) + " layout " +
           LayoutName(layout);
  });
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
