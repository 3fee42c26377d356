// The fused GPU resize + finish kernel against the CPU kernels (ResizeCpu then FinishCpu) on
// the same inputs and random maps (crops, resizes, windows, padding, flips): the outputs must be
// identical, byte for byte, for every dtype and layout, in one launch over samples of different
// sizes. Skipped without a GPU.
#include "kernels/resize/resize_gpu.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "gpu/device.h"
#include "kernels/gpu_kernel_test_util.h"
#include "kernels/finish/finish_cpu.h"

namespace sluice {
namespace {

#define CUDA_OK(expr) ASSERT_EQ((expr), cudaSuccess) << #expr

// One axis: the crop [lo, hi) of the input, resized to `resized` (the identity when equal),
// shown through the window [off, off + out) (padding outside), maybe flipped: what a crop, a
// resize, a crop or pad and a flip compose to.
AxisMap Map(int lo, int hi, int resized, int off, int out, bool flip) {
  AxisMap m;
  m.in_lo = lo, m.in_hi = hi, m.origin = lo;
  m.scale = static_cast<double>(hi - lo) / resized;
  m.resized_len = resized;
  m.out_off = off, m.out_len = out;
  m.flip = flip;
  m.identity = resized == hi - lo;
  return m;
}

int Uniform(std::mt19937& rng, int lo, int hi) {  // in [lo, hi]
  return lo + static_cast<int>(rng() % static_cast<unsigned>(hi - lo + 1));
}

struct Case {
  std::vector<uint8_t> pixels;
  int w = 0, h = 0;
  ResizeParams params;
};

// `count` images of random sizes (the first 40 x 2600 when `tall`), each with the maps `axes`
// gives for its width and height.
template <typename Axes>
std::vector<Case> MakeCases(int count, uint64_t seed, bool tall, Filter filter, Axes axes) {
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::vector<Case> cases;
  for (int i = 0; i < count; ++i) {
    Case c;
    c.w = 17 + static_cast<int>(rng() % 300);
    c.h = 13 + static_cast<int>(rng() % 300);
    if (i == 0 && tall) c.w = 40, c.h = 2600;  // tiles shorter than 32 rows
    c.pixels.resize(static_cast<size_t>(c.w) * c.h * 3);
    for (size_t k = 0; k < c.pixels.size(); ++k)
      c.pixels[k] = static_cast<uint8_t>((k * 7 + (k / 3) % 251 + rng() % 32) & 0xFF);
    c.params.x = axes(rng, c.w);
    c.params.y = axes(rng, c.h);
    c.params.filter = filter;
    for (auto& f : c.params.fill) f = static_cast<uint8_t>(rng());
    cases.push_back(std::move(c));
  }
  return cases;
}

// RandomResizedCrop(224) + flip: a random window of the axis, resized to 224.
AxisMap CropTo224(std::mt19937& rng, int len) {
  const int lo = Uniform(rng, 0, len - 1), hi = Uniform(rng, lo + 1, len);
  return Map(lo, hi, 224, 0, 224, rng() % 2 == 0);
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
    FinishCpu(fin.params, fin.lut, m, out.data());
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
  const auto cases = MakeCases(40, 7, true, Filter::kBilinear, CropTo224);
  RunCompare(cases, DType::kFloat32, Layout::kNCHW, true);
  RunCompare(cases, DType::kFloat16, Layout::kNCHW, true);
  RunCompare(cases, DType::kUInt8, Layout::kNHWC, false);
  RunCompare(cases, DType::kFloat32, Layout::kNHWC, false);
}

TEST_F(ResizeGpuTest, ResizeCenterCropAndBicubicMatchCpuExactly) {
  // Resize to 40-120 then CenterCrop(64) (padding when smaller); a bicubic resize of the whole image.
  const auto center = [](std::mt19937& rng, int len) {
    const int resized = Uniform(rng, 40, 120);
    return Map(0, len, resized, resized >= 64 ? (resized - 64) / 2 : -((64 - resized) / 2), 64, false);
  };
  const auto whole = [](std::mt19937& rng, int len) {
    const int resized = Uniform(rng, 8, 160);
    return Map(0, len, resized, 0, resized, false);
  };
  RunCompare(MakeCases(24, 3, false, Filter::kBilinear, center), DType::kFloat16, Layout::kNCHW, true);
  RunCompare(MakeCases(16, 5, false, Filter::kBicubic, whole), DType::kUInt8, Layout::kNCHW, false);
}

TEST_F(ResizeGpuTest, HeavyDownscaleUsesShorterTilesAndMatchesCpuExactly) {
  // 40 x 2600 -> 16 x 16: each output row reads ~330 input rows, so a tile is one row tall.
  const auto to16 = [](std::mt19937&, int len) { return Map(0, len, 16, 0, 16, false); };
  RunCompare(MakeCases(6, 13, true, Filter::kBilinear, to16), DType::kFloat32, Layout::kNCHW, false, true);
}

TEST_F(ResizeGpuTest, PaddedRandomCropMatchesCpuExactly) {
  // RandomCrop(48, padding=4, pad_if_needed) + flip: a window of the unresized axis, padded.
  const auto crop = [](std::mt19937& rng, int len) {
    const int padded = std::max(len + 8, 48), before = (padded - len) / 2;
    return Map(0, len, len, Uniform(rng, 0, padded - 48) - before, 48, rng() % 2 == 0);
  };
  RunCompare(MakeCases(24, 11, false, Filter::kBilinear, crop), DType::kUInt8, Layout::kNHWC, false);
}

}  // namespace
}  // namespace sluice
