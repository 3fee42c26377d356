// The affine warp: hand-computed rotations and shifts, and the CPU kernel against the
// torchvision-definition oracle (warp_ref.h) on random images, parameters and windows.
#include "kernels/warp/warp_cpu.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "kernels/warp/warp_ref.h"
#include "kernels/warp/affine_matrix.h"

namespace sluice {
namespace {

WarpParams Params(const AffineParams& d, int w, int h, bool bilinear, uint8_t fill = 0) {
  WarpParams p;
  p.enabled = true;
  p.filter = bilinear ? WarpFilter::kBilinear : WarpFilter::kNearest;
  p.src_w = w;
  p.src_h = h;
  p.out_w = w, p.out_h = h;
  InverseAffineMatrix(d, w, h, nullptr, p.m);
  p.fill[0] = p.fill[1] = p.fill[2] = fill;
  p.x = WarpAxis{0, w, false};
  p.y = WarpAxis{0, h, false};
  return p;
}

std::vector<uint8_t> Warped(const WarpParams& p, const std::vector<uint8_t>& img) {
  std::vector<uint8_t> out(static_cast<size_t>(p.x.len) * p.y.len * 3);
  WarpCpu(p, ImageView{img.data(), p.src_h, p.src_w, 3, static_cast<ptrdiff_t>(p.src_w) * 3},
          MutableImageView{out.data(), p.y.len, p.x.len, 3, static_cast<ptrdiff_t>(p.x.len) * 3});
  return out;
}

// A w x h image whose pixel (x, y) is (10 * y + x, x, y).
std::vector<uint8_t> Ramp(int w, int h) {
  std::vector<uint8_t> img(static_cast<size_t>(w) * h * 3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      uint8_t* p = &img[(static_cast<size_t>(y) * w + x) * 3];
      p[0] = static_cast<uint8_t>(10 * y + x), p[1] = static_cast<uint8_t>(x), p[2] = static_cast<uint8_t>(y);
    }
  return img;
}

uint8_t At(const std::vector<uint8_t>& img, int w, int x, int y) { return img[(static_cast<size_t>(y) * w + x) * 3]; }

TEST(Warp, QuarterTurnsOfASquareImageMovePixelsExactly) {
  const int n = 5;
  const std::vector<uint8_t> img = Ramp(n, n);
  for (bool bilinear : {false, true}) {
    AffineParams d;
    d.angle = -90.0;  // rotate(90): counter-clockwise
    const std::vector<uint8_t> out = Warped(Params(d, n, n, bilinear), img);
    // Counter-clockwise: output (x, y) shows input (n - 1 - y, x).
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) ASSERT_EQ(At(out, n, x, y), At(img, n, n - 1 - y, x)) << x << "," << y;
    d.angle = 180.0;
    const std::vector<uint8_t> half = Warped(Params(d, n, n, bilinear), img);
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) ASSERT_EQ(At(half, n, x, y), At(img, n, n - 1 - x, n - 1 - y));
  }
}

TEST(Warp, WholePixelShiftsFillTheUncoveredEdge) {
  const int w = 6, h = 4;
  const std::vector<uint8_t> img = Ramp(w, h);
  AffineParams d;
  d.tx = 2;  // content moves right by 2
  d.ty = -1;  // and up by 1
  const std::vector<uint8_t> out = Warped(Params(d, w, h, false, 77), img);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const int sx = x - 2, sy = y + 1;
      const uint8_t want = sx >= 0 && sy < h ? At(img, w, sx, sy) : 77;
      ASSERT_EQ(At(out, w, x, y), want) << x << "," << y;
    }
}

TEST(Warp, BilinearHalfPixelBlendAndFillMask) {
  // Scale 2 about the centre of a 2 x 1 image: output x reads (x - 0.5) / 2 + 0.5 = 0.25, 0.75.
  std::vector<uint8_t> img = {0, 0, 0, 200, 200, 200};
  AffineParams d;
  d.scale = 2.0;
  const std::vector<uint8_t> out = Warped(Params(d, 2, 1, true, 0), img);
  // 0.25: 0.75 * 0 + 0.25 * 200 = 50; 0.75: 150. The row (y = 0) is inside: mask 1.
  EXPECT_EQ(out[0], 50);
  EXPECT_EQ(out[3], 150);
  // A half-pixel shift right with fill 100: x = 0 reads -0.5: half of pixel 0 (value 0) is
  // inside, mask 0.5, so (0 * 0.5 - 100) * 0.5 + 100 = 50; x = 1 reads 0.5: 100.
  AffineParams shift;
  WarpParams p = Params(shift, 2, 1, true, 100);
  p.m[2] = -0.5;
  const std::vector<uint8_t> out2 = Warped(p, img);
  EXPECT_EQ(out2[0], 50);
  EXPECT_EQ(out2[3], 100);
}

TEST(Warp, CpuMatchesTheReferenceWithWindows) {
  std::mt19937 rng(5);
  for (int iter = 0; iter < 60; ++iter) {
    const int w = 3 + static_cast<int>(rng() % 60), h = 3 + static_cast<int>(rng() % 60);
    std::vector<uint8_t> img(static_cast<size_t>(w) * h * 3);
    for (uint8_t& v : img) v = static_cast<uint8_t>(rng());
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    AffineParams d;
    d.angle = 180.0 * u(rng);
    if (iter % 2) {
      d.tx = static_cast<int>(rng() % 7) - 3;
      d.ty = static_cast<int>(rng() % 7) - 3;
      d.scale = 0.7 + 0.6 * (u(rng) + 1.0) / 2.0;
      d.shear_x = 20.0 * u(rng);
      d.shear_y = iter % 4 == 1 ? 10.0 * u(rng) : 0.0;
    }
    const bool bilinear = iter % 3 == 0;
    const uint8_t fill = static_cast<uint8_t>(rng());
    WarpParams p = Params(d, w, h, bilinear, fill);
    // A window that may reach outside the warped image, maybe flipped.
    p.x = WarpAxis{static_cast<int>(rng() % 9) - 4, 1 + static_cast<int>(rng() % static_cast<unsigned>(w + 4)),
                   rng() % 2 == 0};
    p.y = WarpAxis{static_cast<int>(rng() % 9) - 4, 1 + static_cast<int>(rng() % static_cast<unsigned>(h + 4)),
                   rng() % 2 == 0};
    p.pad_fill[0] = 1, p.pad_fill[1] = 2, p.pad_fill[2] = 3;
    ref::AffineArgs a;
    a.angle = d.angle;
    a.tx = d.tx, a.ty = d.ty;
    a.scale = d.scale;
    a.shear_x = d.shear_x, a.shear_y = d.shear_y;
    a.bilinear = bilinear;
    a.fill[0] = a.fill[1] = a.fill[2] = fill;
    const std::vector<uint8_t> full = ref::AffineImage(img, w, h, a);
    const std::vector<uint8_t> out = Warped(p, img);
    for (int l = 0; l < p.y.len; ++l)
      for (int k = 0; k < p.x.len; ++k) {
        const int x = p.x.Index(k), y = p.y.Index(l);
        const bool pad = x < 0 || x >= w || y < 0 || y >= h;
        for (int c = 0; c < 3; ++c) {
          const uint8_t want = pad ? p.pad_fill[c] : full[(static_cast<size_t>(y) * w + x) * 3 + c];
          ASSERT_EQ(out[(static_cast<size_t>(l) * p.x.len + k) * 3 + c], want)
              << "iter " << iter << " at " << k << "," << l << " channel " << c;
        }
      }
  }
}

}  // namespace
TEST(Warp, ExpandedSizeIsTheRotatedBoundingBox) {
  auto size = [](double degrees, int w, int h) {
    AffineParams a;
    a.angle = -degrees;  // RandomRotation's angle, as affine's
    double m[6];
    InverseAffineMatrix(a, w, h, nullptr, m);
    int ow = 0, oh = 0;
    ExpandedSize(m, w, h, &ow, &oh);
    return std::pair{ow, oh};
  };
  EXPECT_EQ(size(0.0, 37, 21), (std::pair{37, 21}));     // the 1e-4 truncation keeps exact edges
  EXPECT_EQ(size(90.0, 40, 24), (std::pair{24, 40}));    // a quarter turn swaps the sides
  EXPECT_EQ(size(180.0, 40, 24), (std::pair{40, 24}));
  EXPECT_EQ(size(45.0, 10, 10), (std::pair{16, 16}));    // corners at +-5 sqrt(2) about 5: [-3, 13)
  EXPECT_EQ(size(1.0, 100, 60), (std::pair{102, 62}));   // 100 cos 1 + 60 sin 1 = 101.03, widened by the floor
}

TEST(Warp, PerspectiveCoefficientsMapEndpointsToStartpoints) {
  const double start[4][2] = {{0, 0}, {79, 0}, {79, 59}, {0, 59}};
  const double end[4][2] = {{7, 3}, {70, 9}, {75, 50}, {2, 56}};
  float c[8];
  ASSERT_TRUE(PerspectiveCoefficients(start, end, c));
  for (int k = 0; k < 4; ++k) {
    const double x = end[k][0], y = end[k][1], d = c[6] * x + c[7] * y + 1.0;
    EXPECT_NEAR((c[0] * x + c[1] * y + c[2]) / d, start[k][0], 2e-3) << k;  // float32 coefficients
    EXPECT_NEAR((c[3] * x + c[4] * y + c[5]) / d, start[k][1], 2e-3) << k;
  }
  const double line[4][2] = {{0, 0}, {1, 1}, {2, 2}, {3, 3}};  // all on one line: no transform
  EXPECT_FALSE(PerspectiveCoefficients(start, line, c));
}

}  // namespace sluice
