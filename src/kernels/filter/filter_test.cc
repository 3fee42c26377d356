// The filters: hand-computed blur weights and pixels, and the CPU kernels against the
// torchvision-definition oracle (filter_ref.h) on random images and parameters.
#include "kernels/filter/filter_cpu.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "kernels/filter/filter_ref.h"
#include "kernels/filter/gaussian_kernel.h"
#include "kernels/warp/affine_matrix.h"

namespace sluice {
namespace {

std::vector<uint8_t> Filtered(const FilterStep& f, const std::vector<uint8_t>& img, int w, int h) {
  std::vector<uint8_t> out(img.size(), 0xAB);
  std::vector<double> scratch;
  FilterCpu(f, ImageView{img.data(), h, w, 3, static_cast<ptrdiff_t>(w) * 3},
            MutableImageView{out.data(), h, w, 3, static_cast<ptrdiff_t>(w) * 3}, &scratch);
  return out;
}

std::vector<uint8_t> Noise(int w, int h, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> img(static_cast<size_t>(w) * h * 3);
  // Smooth-ish content plus noise, so that blurred values spread over the whole range.
  for (size_t i = 0; i < img.size(); ++i)
    img[i] = static_cast<uint8_t>(((i / 3) % static_cast<size_t>(w)) * 255 / static_cast<size_t>(w) / 2 + rng() % 128);
  return img;
}

FilterStep Blur(int kx, int ky, float sigma) {
  FilterStep f;
  f.kind = FilterKind::kGaussianBlur;
  f.kx = kx, f.ky = ky;
  GaussianKernel1d(kx, sigma, f.wx);
  GaussianKernel1d(ky, sigma, f.wy);
  return f;
}

TEST(Filter, GaussianWeightsAreTorchvisionsFormula) {
  float w[3];
  GaussianKernel1d(3, 1.0f, w);  // x = -1/sqrt(2), 0, 1/sqrt(2): exp(-1/2), 1, exp(-1/2), normalized
  const double e = std::exp(-0.5), sum = 1.0 + 2.0 * e;
  EXPECT_NEAR(w[0], e / sum, 1e-7);
  EXPECT_NEAR(w[1], 1.0 / sum, 1e-7);
  EXPECT_EQ(w[0], w[2]);
  float one[1];
  GaussianKernel1d(1, 0.5f, one);
  EXPECT_EQ(one[0], 1.0f);
}

TEST(Filter, BlurKeepsAConstantImageAndReflectsAtTheEdges) {
  const int w = 7, h = 5;
  const std::vector<uint8_t> flat(static_cast<size_t>(w) * h * 3, 77);
  EXPECT_EQ(Filtered(Blur(5, 3, 1.7f), flat, w, h), flat);
  // A 1-D check by hand: a 3-wide kernel (a, b, a) along x only, on a row 0, 90, 0, ... : pixel 0
  // reads (x=1, x=0, x=1) under reflect padding: 2 * a * 90; pixel 1: b * 90.
  std::vector<uint8_t> row(static_cast<size_t>(w) * 3, 0);
  for (int c = 0; c < 3; ++c) row[3 + c] = 90;
  FilterStep f = Blur(3, 1, 1.0f);
  const std::vector<uint8_t> out = Filtered(f, row, w, 1);
  EXPECT_EQ(out[0], static_cast<uint8_t>(std::nearbyint(2.0 * f.wx[0] * 90.0)));
  EXPECT_EQ(out[3], static_cast<uint8_t>(std::nearbyint(static_cast<double>(f.wx[1]) * 90.0)));
  EXPECT_EQ(out[6], static_cast<uint8_t>(std::nearbyint(static_cast<double>(f.wx[2]) * 90.0)));
  EXPECT_EQ(out[9], 0);
}

TEST(Filter, BlurMatchesTheTorchvisionOracle) {
  std::mt19937 rng(5);
  int64_t total = 0, differ = 0;
  for (int t = 0; t < 24; ++t) {
    const int w = 1 + static_cast<int>(rng() % 60), h = 1 + static_cast<int>(rng() % 50);
    const int kx = 1 + 2 * static_cast<int>(rng() % 12), ky = 1 + 2 * static_cast<int>(rng() % 12);
    const float sigma = 0.1f + static_cast<float>(rng() % 1000) / 250.0f;
    const std::vector<uint8_t> img = Noise(w, h, static_cast<uint32_t>(t));
    const FilterStep f = Blur(kx, ky, sigma);
    const std::vector<uint8_t> got = Filtered(f, img, w, h);
    const std::vector<uint8_t> want = filter_ref::GaussianBlur(img, w, h, std::vector<float>(f.wx, f.wx + kx),
                                                               std::vector<float>(f.wy, f.wy + ky));
    for (size_t i = 0; i < got.size(); ++i) {
      // Separable double sums against the float32 2-D kernel: one level at a rounding boundary.
      ASSERT_LE(std::abs(got[i] - want[i]), 1) << "case " << t << " at " << i;
      differ += got[i] != want[i];
    }
    total += static_cast<int64_t>(got.size());
  }
  EXPECT_LE(differ * 1000, total) << differ << " of " << total << " differ";
}

TEST(Filter, SharpnessMatchesTheTorchvisionOracleExactly) {
  std::mt19937 rng(8);
  for (int t = 0; t < 30; ++t) {
    const int w = 1 + static_cast<int>(rng() % 40), h = 1 + static_cast<int>(rng() % 40);
    const double factor = static_cast<double>(static_cast<float>(rng() % 2000) / 1000.0f);  // [0, 2)
    const std::vector<uint8_t> img = Noise(w, h, static_cast<uint32_t>(100 + t));
    FilterStep f;
    f.kind = FilterKind::kSharpness;
    f.alpha = static_cast<float>(1.0 - factor);
    ASSERT_EQ(Filtered(f, img, w, h), filter_ref::Sharpness(img, w, h, factor)) << "case " << t << " " << w << "x"
                                                                                << h << " factor " << factor;
  }
}

TEST(Filter, SharpnessByHand) {
  // 3x3, centre 130, the rest 0: blurred centre = round(5 * 130 / 13) = 50; factor 2 (alpha -1):
  // 130 - (50 - 130) = 210. Border pixels stay.
  std::vector<uint8_t> img(27, 0);
  img[12] = img[13] = img[14] = 130;
  FilterStep f;
  f.kind = FilterKind::kSharpness;
  f.alpha = -1.0f;
  const std::vector<uint8_t> out = Filtered(f, img, 3, 3);
  EXPECT_EQ(out[12], 210);
  EXPECT_EQ(out[0], 0);
}

TEST(Filter, AffineTranslatesTheWholeImage) {
  const int w = 6, h = 4;
  const std::vector<uint8_t> img = Noise(w, h, 3);
  FilterStep f;
  f.kind = FilterKind::kAffine;
  AffineParams d;
  d.tx = 2;  // translate right by 2: output (x, y) = input (x - 2, y), fill 9 on the left
  f.warp.enabled = true;
  f.warp.src_w = w, f.warp.src_h = h;
  f.warp.out_w = w, f.warp.out_h = h;
  InverseAffineMatrix(d, w, h, nullptr, f.warp.m);
  f.warp.fill[0] = f.warp.fill[1] = f.warp.fill[2] = 9;
  f.warp.x = WarpAxis{0, w, false};
  f.warp.y = WarpAxis{0, h, false};
  const std::vector<uint8_t> out = Filtered(f, img, w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c)
        ASSERT_EQ(out[(static_cast<size_t>(y) * w + x) * 3 + c],
                  x < 2 ? 9 : img[(static_cast<size_t>(y) * w + x - 2) * 3 + c]);
}

}  // namespace
}  // namespace sluice
