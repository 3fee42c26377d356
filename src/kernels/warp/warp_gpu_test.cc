// The GPU resample + warp + finish kernel against the CPU kernels (ResizeCpu, WarpCpu, then
// FinishCpu) on the same inputs and random geometry: byte for byte, for every dtype and
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
#include "kernels/finish/finish_cpu.h"
#include "kernels/warp/affine_matrix.h"
#include "kernels/warp/warp_cpu.h"
#include "kernels/warp/warp_window.h"

namespace sluice {
namespace {

#define CUDA_OK(expr) ASSERT_EQ((expr), cudaSuccess) << #expr

struct Case {
  std::vector<uint8_t> pixels;
  int w = 0, h = 0;
  ResizeParams params;
  WarpParams warp;
};

double Uniform(std::mt19937& rng, double lo, double hi) {
  return lo + (hi - lo) * (static_cast<double>(rng()) / 4294967296.0);
}

// One axis resampled: the crop [lo, hi) resized to `resized` (the identity when equal).
AxisMap Resampled(int lo, int hi, int resized) {
  AxisMap m;
  m.in_lo = lo, m.in_hi = hi, m.origin = lo;
  m.scale = static_cast<double>(hi - lo) / resized;
  m.resized_len = m.out_len = resized;
  m.identity = resized == hi - lo;
  return m;
}

// What a list of geometry gives one image: the resampling before the warp (x, y maps), the warp
// of the resampled image with random affine parameters about its centre, and the window after
// it, each from `geometry(rng, w, h, &case)`.
template <typename Geometry>
std::vector<Case> MakeCases(int count, uint64_t seed, Geometry geometry) {
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::vector<Case> cases;
  for (int i = 0; i < count; ++i) {
    Case c;
    c.w = 60 + static_cast<int>(rng() % 300);
    c.h = 60 + static_cast<int>(rng() % 300);
    c.pixels.resize(static_cast<size_t>(c.w) * c.h * 3);
    for (size_t k = 0; k < c.pixels.size(); ++k)
      c.pixels[k] = static_cast<uint8_t>((k * 7 + (k / 3) % 251 + rng() % 32) & 0xFF);
    geometry(rng, &c);
    c.warp.enabled = true;
    c.warp.src_w = c.params.x.out_len, c.warp.src_h = c.params.y.out_len;
    c.warp.out_w = c.warp.src_w, c.warp.out_h = c.warp.src_h;
    cases.push_back(std::move(c));
  }
  return cases;
}

// The seed pipeline's geometry: Resize(67) (shorter edge), RandomRotation(20) nearest,
// RandomCrop(56), RandomHorizontalFlip.
void SeedGeometry(std::mt19937& rng, Case* c) {
  const bool w_short = c->w <= c->h;
  const int rw = w_short ? 67 : 67 * c->w / c->h, rh = w_short ? 67 * c->h / c->w : 67;
  c->params.x = Resampled(0, c->w, rw);
  c->params.y = Resampled(0, c->h, rh);
  AffineParams a;
  a.angle = Uniform(rng, -20.0, 20.0);
  InverseAffineMatrix(a, rw, rh, nullptr, c->warp.m);
  c->warp.filter = WarpFilter::kNearest;
  c->warp.x = WarpAxis{static_cast<int>(rng() % static_cast<unsigned>(rw - 55)), 56, rng() % 2 == 0};
  c->warp.y = WarpAxis{static_cast<int>(rng() % static_cast<unsigned>(rh - 55)), 56, false};
}

// RandomAffine (bilinear, fill) of the image (or of its 70 x 90 centre), then a window of 80 x 80
// that pads (fill 1, 2, 3) and maybe flips vertically.
AffineParams RandomAffineParams(std::mt19937& rng) {
  AffineParams a;
  a.angle = Uniform(rng, -45.0, 45.0);
  a.tx = static_cast<int>(Uniform(rng, -14.0, 14.0)), a.ty = static_cast<int>(Uniform(rng, -9.0, 9.0));
  a.scale = Uniform(rng, 0.7, 1.3);
  a.shear_x = Uniform(rng, -10.0, 10.0), a.shear_y = Uniform(rng, -5.0, 5.0);
  return a;
}

void BilinearAffine(std::mt19937& rng, Case* c, bool center_crop) {
  const int cw = center_crop ? 70 : c->w, ch = center_crop ? 90 : c->h;
  c->params.x = Resampled(0, c->w, c->w);
  c->params.y = Resampled(0, c->h, c->h);
  if (center_crop) {  // a window on the unresampled image (padding where the image is smaller)
    c->params.x.out_off = (c->w - cw) / 2, c->params.x.out_len = cw;
    c->params.y.out_off = (c->h - ch) / 2, c->params.y.out_len = ch;
  }
  InverseAffineMatrix(RandomAffineParams(rng), cw, ch, nullptr, c->warp.m);
  c->warp.filter = WarpFilter::kBilinear;
  for (int k = 0; k < 3; ++k) {
    c->warp.fill[k] = static_cast<uint8_t>(200 - 50 * k);
    c->warp.pad_fill[k] = static_cast<uint8_t>(1 + k);
  }
  if (!center_crop) {
    c->warp.x = WarpAxis{0, cw, false}, c->warp.y = WarpAxis{0, ch, false};
    return;
  }
  c->warp.x = WarpAxis{static_cast<int>(rng() % 17) - 8, 80, false};
  c->warp.y = WarpAxis{static_cast<int>(rng() % 17) - 3, 80, rng() % 2 == 0};
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
    FinishCpu(fin.params, fin.lut, wv, out.data());
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
  const auto cases = MakeCases(24, 7, SeedGeometry);
  RunCompare(cases, DType::kFloat32, Layout::kNCHW, true);
  RunCompare(cases, DType::kFloat16, Layout::kNCHW, true);
  RunCompare(cases, DType::kUInt8, Layout::kNHWC, false);
}

// The resample narrowed to what the warp reads (warp_window.h): the tap tables then cover the
// window, and the warp fetches from it.
TEST_F(WarpGpuTest, NarrowedSeedGeometryMatchesCpuExactly) {
  std::vector<Case> cases = MakeCases(24, 9, SeedGeometry);
  int narrowed = 0;
  for (Case& c : cases) narrowed += WindowWarpSource(&c.params, &c.warp) ? 1 : 0;
  ASSERT_GT(narrowed, 12);
  RunCompare(cases, DType::kFloat32, Layout::kNCHW, true);
  RunCompare(cases, DType::kUInt8, Layout::kNHWC, false);
}

TEST_F(WarpGpuTest, BilinearAffineWithFillsAndPaddedWindowsMatchesCpuExactly) {
  RunCompare(MakeCases(20, 3, [](std::mt19937& rng, Case* c) { BilinearAffine(rng, c, true); }), DType::kFloat32,
             Layout::kNHWC, false);
  // Without a resize: the taps are the identity.
  RunCompare(MakeCases(8, 5, [](std::mt19937& rng, Case* c) { BilinearAffine(rng, c, false); }), DType::kUInt8,
             Layout::kNCHW, false);
}

}  // namespace
}  // namespace sluice
