// The fused GPU resize + finish kernel against the CPU kernels (ResizeCpu then NormalizeCpu) on
// the same inputs and drawn geometry: the outputs must be identical, byte for byte, for every
// dtype and layout, in one launch over samples of different sizes. Skipped without a GPU.
#include "kernels/resize/resize_gpu.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "gpu/device.h"
#include "kernels/gpu_kernel_test_util.h"
#include "kernels/normalize/normalize_cpu.h"
#include "pipeline/plan.h"

namespace sluice {
namespace {

namespace T = sluice::transforms;

#define CUDA_OK(expr) ASSERT_EQ((expr), cudaSuccess) << #expr

struct Case {
  std::vector<uint8_t> pixels;
  int w = 0, h = 0;
  ResizeParams params;
};

std::vector<Case> MakeCases(const std::vector<T::Transform>& transforms, int count, uint64_t seed) {
  Result<Plan> plan = Plan::Create(transforms);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::vector<Case> cases;
  for (int i = 0; i < count; ++i) {
    Case c;
    c.w = 17 + static_cast<int>(rng() % 300);
    c.h = 13 + static_cast<int>(rng() % 300);
    if (i == 0) c.w = 40, c.h = 2600;  // a tall image: tiles shorter than 32 rows
    c.pixels.resize(static_cast<size_t>(c.w) * c.h * 3);
    for (size_t k = 0; k < c.pixels.size(); ++k)
      c.pixels[k] = static_cast<uint8_t>((k * 7 + (k / 3) % 251 + rng() % 32) & 0xFF);
    SampleGeometry geo;
    const Status s = plan->Draw(c.w, c.h, SampleKey{seed, 0, static_cast<uint64_t>(i)}, &geo);
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(geo.num_segments, 1);
    c.params = geo.segments[0];
    cases.push_back(std::move(c));
  }
  return cases;
}

void RunCompare(const std::vector<Case>& cases, DType dtype, Layout layout, bool normalize,
                bool first_has_short_tiles = false) {
  const gpu_test::TestFinish fin(dtype, layout, normalize, {0.485f, 0.456f, 0.406f}, {0.229f, 0.224f, 0.225f});

  // CPU reference outputs, and the GPU inputs.
  std::vector<std::vector<uint8_t>> expected;
  size_t in_total = 0, out_total = 0;
  int64_t words = 0;
  for (const Case& c : cases) {
    const ResizeParams& p = c.params;
    std::vector<uint8_t> mid(static_cast<size_t>(p.x.out_len) * p.y.out_len * 3);
    ResizeScratch scratch;
    const MutableImageView m{mid.data(), p.y.out_len, p.x.out_len, 3, static_cast<ptrdiff_t>(p.x.out_len) * 3};
    ResizeCpu(p, ImageView{c.pixels.data(), c.h, c.w, 3, static_cast<ptrdiff_t>(c.w) * 3}, m, &scratch);
    std::vector<uint8_t> out(mid.size() * fin.element_size());
    NormalizeCpu(fin.params, fin.lut, m, out.data());
    expected.push_back(std::move(out));
    in_total += c.pixels.size();
    out_total += expected.back().size();
    words += ResizeTapWords(p);
  }

  const gpu_test::DeviceBytes d_in(in_total), d_out(out_total, 0xA5), d_taps(static_cast<size_t>(words) * 4),
      d_desc(sizeof(GpuResizeSample) * cases.size());
  std::vector<int32_t> taps(static_cast<size_t>(words));
  std::vector<GpuResizeSample> desc(cases.size());
  size_t in_off = 0, out_off = 0;
  int64_t tap_off = 0;
  int max_tiles = 0;
  ResizeScratch scratch;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    CUDA_OK(cudaMemcpy(d_in.get() + in_off, c.pixels.data(), c.pixels.size(), cudaMemcpyHostToDevice));
    GpuResizeSample& d = desc[i];
    d.in = d_in.get() + in_off;
    d.in_pitch = static_cast<int64_t>(c.w) * 3;
    d.in_h = c.h, d.in_w = c.w;
    d.out = d_out.get() + out_off;
    d.out_h = c.params.y.out_len, d.out_w = c.params.x.out_len;
    std::memcpy(d.fill, c.params.fill, 3);
    ASSERT_TRUE(PackResizeTaps(c.params, tap_off, taps.data() + tap_off, &scratch, &d).ok());
    if (i == 0 && first_has_short_tiles) {
      EXPECT_LT(d.tile_rows, 32);  // the tall image's rows do not all fit: shorter tiles
    }
    max_tiles = std::max(max_tiles, ResizeTiles(d));
    in_off += c.pixels.size();
    out_off += expected[i].size();
    tap_off += ResizeTapWords(c.params);
  }
  CUDA_OK(cudaMemcpy(d_taps.get(), taps.data(), taps.size() * 4, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(d_desc.get(), desc.data(), sizeof(GpuResizeSample) * desc.size(), cudaMemcpyHostToDevice));
  CUDA_OK(LaunchResizeFinish(d_desc.as<GpuResizeSample>(), static_cast<int>(cases.size()), max_tiles,
                             d_taps.as<int32_t>(), fin.gpu, nullptr));
  gpu_test::ExpectOutputsEqual(d_out, expected, [&](size_t i) {
    return "sample " + std::to_string(i) + " (" + std::to_string(cases[i].w) + "x" + std::to_string(cases[i].h) +
           " -> " + std::to_string(desc[i].out_w) + "x" + std::to_string(desc[i].out_h) + ") differs, dtype " +
           DTypeName(dtype) + " layout " + LayoutName(layout);
  });
}

class ResizeGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

TEST_F(ResizeGpuTest, RandomResizedCropFlipMatchesCpuExactly) {
  const auto cases = MakeCases({T::RandomResizedCrop{224, 224}, T::RandomHorizontalFlip{}}, 40, 7);
  RunCompare(cases, DType::kFloat32, Layout::kNCHW, true);
  RunCompare(cases, DType::kFloat16, Layout::kNCHW, true);
  RunCompare(cases, DType::kUInt8, Layout::kNHWC, false);
  RunCompare(cases, DType::kFloat32, Layout::kNHWC, false);
}

TEST_F(ResizeGpuTest, ResizeCenterCropAndBicubicMatchCpuExactly) {
  T::Resize bicubic;
  bicubic.height = 64;  // shorter side
  bicubic.interpolation = T::Interpolation::kBicubic;
  T::Resize shorter;
  shorter.height = 72;
  RunCompare(MakeCases({shorter, T::CenterCrop{64, 64}}, 24, 3), DType::kFloat16, Layout::kNCHW, true);
  RunCompare(MakeCases({bicubic}, 16, 5), DType::kUInt8, Layout::kNCHW, false);
}

TEST_F(ResizeGpuTest, HeavyDownscaleUsesShorterTilesAndMatchesCpuExactly) {
  // 40 x 2600 -> 16 x 16: each output row reads ~330 input rows, so a tile is one row tall.
  RunCompare(MakeCases({T::Resize{16, 16}}, 6, 13), DType::kFloat32, Layout::kNCHW, false, true);
}

TEST_F(ResizeGpuTest, PaddedRandomCropMatchesCpuExactly) {
  T::RandomCrop crop{48, 48};
  crop.padding = {4, 4, 4, 4};
  crop.pad_if_needed = true;
  crop.fill = {10, 20, 30};
  RunCompare(MakeCases({crop, T::RandomHorizontalFlip{}}, 24, 11), DType::kUInt8, Layout::kNHWC, false);
}

}  // namespace
}  // namespace sluice
