// The GPU resample + warp + finish kernel against the CPU kernels (ResizeCpu, WarpCpu, then
// NormalizeCpu) on the same inputs and drawn geometry: byte for byte, for every dtype and
// layout, nearest and bilinear, with fills, windows that pad and flips, in one launch over
// samples of different sizes. Skipped without a GPU.
#include "kernels/warp/warp_gpu.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "gpu/device.h"
#include "kernels/gpu_kernel_test_util.h"
#include "kernels/normalize/normalize_cpu.h"
#include "kernels/warp/warp_cpu.h"
#include "pipeline/plan.h"

namespace sluice {
namespace {

namespace T = sluice::transforms;

#define CUDA_OK(expr) ASSERT_EQ((expr), cudaSuccess) << #expr

struct Case {
  std::vector<uint8_t> pixels;
  int w = 0, h = 0;
  ResizeParams params;
  WarpParams warp;
};

std::vector<Case> MakeCases(const std::vector<T::Transform>& transforms, int count, uint64_t seed) {
  Result<Plan> plan = Plan::Create(transforms);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::vector<Case> cases;
  for (int i = 0; i < count; ++i) {
    Case c;
    c.w = 60 + static_cast<int>(rng() % 300);
    c.h = 60 + static_cast<int>(rng() % 300);
    c.pixels.resize(static_cast<size_t>(c.w) * c.h * 3);
    for (size_t k = 0; k < c.pixels.size(); ++k)
      c.pixels[k] = static_cast<uint8_t>((k * 7 + (k / 3) % 251 + rng() % 32) & 0xFF);
    SampleGeometry geo;
    const Status s = plan->Draw(c.w, c.h, SampleKey{seed, 0, static_cast<uint64_t>(i)}, &geo);
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(geo.num_segments, 1);
    EXPECT_TRUE(geo.warps[0].enabled);
    c.params = geo.segments[0];
    c.warp = geo.warps[0];
    cases.push_back(std::move(c));
  }
  return cases;
}

void RunCompare(const std::vector<Case>& cases, DType dtype, Layout layout, bool normalize) {
  const gpu_test::TestFinish fin(dtype, layout, normalize, {0.5f, 0.5f, 0.5f}, {0.5f, 0.5f, 0.5f});

  std::vector<std::vector<uint8_t>> expected;
  size_t in_total = 0, out_total = 0;
  int64_t words = 0, max_pixels = 0;
  for (const Case& c : cases) {
    const ResizeParams& p = c.params;
    std::vector<uint8_t> mid(static_cast<size_t>(p.x.out_len) * p.y.out_len * 3);
    ResizeScratch scratch;
    const MutableImageView m{mid.data(), p.y.out_len, p.x.out_len, 3, static_cast<ptrdiff_t>(p.x.out_len) * 3};
    ResizeCpu(p, ImageView{c.pixels.data(), c.h, c.w, 3, static_cast<ptrdiff_t>(c.w) * 3}, m, &scratch);
    const int ow = c.warp.x.len, oh = c.warp.y.len;
    std::vector<uint8_t> warped(static_cast<size_t>(ow) * oh * 3);
    const MutableImageView wv{warped.data(), oh, ow, 3, static_cast<ptrdiff_t>(ow) * 3};
    WarpCpu(c.warp, m, wv);
    std::vector<uint8_t> out(warped.size() * fin.element_size());
    NormalizeCpu(fin.params, fin.lut, wv, out.data());
    expected.push_back(std::move(out));
    in_total += c.pixels.size();
    out_total += expected.back().size();
    words += ResizeTapWords(p);
    max_pixels = std::max<int64_t>(max_pixels, static_cast<int64_t>(ow) * oh);
  }

  const gpu_test::DeviceBytes d_in(in_total), d_out(out_total, 0xA5), d_taps(static_cast<size_t>(words) * 4),
      d_desc(sizeof(GpuWarpSample) * cases.size());
  std::vector<int32_t> taps(static_cast<size_t>(words));
  std::vector<GpuWarpSample> desc(cases.size());
  size_t in_off = 0, out_off = 0;
  int64_t tap_off = 0;
  ResizeScratch scratch;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    CUDA_OK(cudaMemcpy(d_in.get() + in_off, c.pixels.data(), c.pixels.size(), cudaMemcpyHostToDevice));
    GpuWarpSample& d = desc[i];
    d.in = d_in.get() + in_off;
    d.in_pitch = static_cast<int64_t>(c.w) * 3;
    d.in_h = c.h, d.in_w = c.w;
    d.out = d_out.get() + out_off;
    PackWarpSample(c.params, c.warp, tap_off, taps.data() + tap_off, &scratch, &d);
    in_off += c.pixels.size();
    out_off += expected[i].size();
    tap_off += ResizeTapWords(c.params);
  }
  CUDA_OK(cudaMemcpy(d_taps.get(), taps.data(), taps.size() * 4, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(d_desc.get(), desc.data(), sizeof(GpuWarpSample) * desc.size(), cudaMemcpyHostToDevice));
  CUDA_OK(LaunchWarpFinish(d_desc.as<GpuWarpSample>(), static_cast<int>(cases.size()), max_pixels,
                           d_taps.as<int32_t>(), fin.gpu, nullptr));
  gpu_test::ExpectOutputsEqual(d_out, expected, [&](size_t i) {
    return "sample " + std::to_string(i) + " (" + std::to_string(cases[i].w) + "x" + std::to_string(cases[i].h) +
           ") differs, dtype " + DTypeName(dtype) + " layout " + LayoutName(layout);
  });
}

class WarpGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

TEST_F(WarpGpuTest, SeedGeometryMatchesCpuExactly) {
  // The seed pipeline's geometry: Resize, RandomRotation(20), RandomCrop, RandomHorizontalFlip.
  const auto cases = MakeCases({T::Resize{67}, T::RandomRotation{{-20.0, 20.0}}, T::RandomCrop{56, 56},
                                T::RandomHorizontalFlip{}}, 24, 7);
  RunCompare(cases, DType::kFloat32, Layout::kNCHW, true);
  RunCompare(cases, DType::kFloat16, Layout::kNCHW, true);
  RunCompare(cases, DType::kUInt8, Layout::kNHWC, false);
}

TEST_F(WarpGpuTest, BilinearAffineWithFillsAndPaddedWindowsMatchesCpuExactly) {
  T::RandomAffine affine;
  affine.degrees = {-45.0, 45.0};
  affine.translate = {0.2, 0.1};
  affine.scale = {0.7, 1.3};
  affine.shear = {-10.0, 10.0, -5.0, 5.0};
  affine.interpolation = T::Interpolation::kBilinear;
  affine.fill = {200, 100, 50};
  T::RandomCrop crop{80, 80};
  crop.pad_if_needed = true;
  crop.padding = {3, 3, 3, 3};
  crop.fill = {1, 2, 3};
  RunCompare(MakeCases({T::CenterCrop{90, 70}, affine, crop, T::RandomVerticalFlip{}}, 20, 3), DType::kFloat32,
             Layout::kNHWC, false);
  // Without a resize: the taps are the identity.
  RunCompare(MakeCases({affine}, 8, 5), DType::kUInt8, Layout::kNCHW, false);
}

}  // namespace
}  // namespace sluice
