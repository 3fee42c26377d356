// WindowWarpSource: the resample narrowed to what the warp reads gives the same pixels, byte for
// byte (ResizeCpu then WarpCpu, narrowed and not, on random images and affine warps, nearest
// and bilinear, torchvision's float32 grid too, windows that pad and flip), and it narrows the
// seed pipeline's rotation + crop to well under the whole image; what it must leave alone, it does.
#include "kernels/warp/warp_window.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "kernels/resize/resize_cpu.h"
#include "kernels/warp/affine_matrix.h"
#include "kernels/warp/warp_cpu.h"

namespace sluice {
namespace {

double Uniform(std::mt19937& rng, double lo, double hi) {
  return lo + (hi - lo) * (static_cast<double>(rng()) / 4294967296.0);
}

// One axis of an image of `in` pixels resized to `out`.
AxisMap Resized(int in, int out) {
  AxisMap m;
  m.in_lo = 0, m.in_hi = in;
  m.scale = static_cast<double>(in) / out;
  m.resized_len = m.out_len = out;
  m.identity = in == out;
  return m;
}

struct Case {
  int w = 0, h = 0;  // the image
  std::vector<uint8_t> pixels;
  ResizeParams resample;
  WarpParams warp;
};

// A w x h image resized to rw x rh, then warped by `a` about its centre (bilinear or nearest,
// the float32 grid or not), shown through a window of ow x oh at (x0, y0) (maybe flipped).
Case MakeCase(std::mt19937& rng, int w, int h, int rw, int rh, const AffineParams& a, bool bilinear, bool float_grid,
              int x0, int y0, int ow, int oh, bool flip) {
  Case c;
  c.w = w, c.h = h;
  c.pixels.resize(static_cast<size_t>(w) * h * 3);
  for (uint8_t& v : c.pixels) v = static_cast<uint8_t>(rng());
  c.resample.x = Resized(w, rw);
  c.resample.y = Resized(h, rh);
  WarpParams& p = c.warp;
  p.enabled = true;
  p.filter = bilinear ? WarpFilter::kBilinear : WarpFilter::kNearest;
  p.float_grid = float_grid;
  p.src_w = p.out_w = rw;
  p.src_h = p.out_h = rh;
  InverseAffineMatrix(a, rw, rh, nullptr, p.m);
  for (int k = 0; k < 3; ++k) p.fill[k] = static_cast<uint8_t>(100 + k), p.pad_fill[k] = static_cast<uint8_t>(7 + k);
  p.x = WarpAxis{x0, ow, flip};
  p.y = WarpAxis{y0, oh, false};
  return c;
}

// ResizeCpu into the warp's source (or its window), then WarpCpu.
std::vector<uint8_t> Warped(const Case& c, const ResizeParams& resample, const WarpParams& warp) {
  std::vector<uint8_t> mid(static_cast<size_t>(resample.x.out_len) * resample.y.out_len * 3);
  const MutableImageView m{mid.data(), resample.y.out_len, resample.x.out_len, 3,
                           static_cast<ptrdiff_t>(resample.x.out_len) * 3};
  ResizeScratch scratch;
  ResizeCpu(resample, ImageView{c.pixels.data(), c.h, c.w, 3, static_cast<ptrdiff_t>(c.w) * 3}, m, &scratch);
  std::vector<uint8_t> out(static_cast<size_t>(warp.x.len) * warp.y.len * 3);
  WarpCpu(warp, m, MutableImageView{out.data(), warp.y.len, warp.x.len, 3, static_cast<ptrdiff_t>(warp.x.len) * 3});
  return out;
}

TEST(WarpWindow, NarrowedResampleGivesTheSamePixels) {
  std::mt19937 rng(17);
  int narrowed = 0, cases = 0;
  for (int i = 0; i < 300; ++i) {
    const int w = 40 + static_cast<int>(rng() % 200), h = 40 + static_cast<int>(rng() % 200);
    const int rw = 30 + static_cast<int>(rng() % 150), rh = 30 + static_cast<int>(rng() % 150);
    AffineParams a;
    a.angle = Uniform(rng, -45.0, 45.0);
    if (i % 3 == 0) {
      a.tx = static_cast<int>(Uniform(rng, -10.0, 10.0)), a.ty = static_cast<int>(Uniform(rng, -10.0, 10.0));
      a.scale = Uniform(rng, 0.7, 1.4);
      a.shear_x = Uniform(rng, -15.0, 15.0), a.shear_y = Uniform(rng, -10.0, 10.0);
    }
    // Windows inside the warped image, and some reaching past it (padding).
    const int ow = 4 + static_cast<int>(rng() % static_cast<unsigned>(rw)), oh = 4 + static_cast<int>(rng() % static_cast<unsigned>(rh));
    const int x0 = static_cast<int>(rng() % static_cast<unsigned>(rw + 8)) - 6;
    const int y0 = static_cast<int>(rng() % static_cast<unsigned>(rh + 8)) - 6;
    const Case c = MakeCase(rng, w, h, rw, rh, a, i % 2 == 0, i % 5 == 0, x0, y0, ow, oh, i % 4 == 1);
    ResizeParams resample = c.resample;
    WarpParams warp = c.warp;
    const bool did = WindowWarpSource(&resample, &warp);
    ++cases;
    if (!did) continue;
    ++narrowed;
    ASSERT_LE(resample.x.out_len * resample.y.out_len, c.resample.x.out_len * c.resample.y.out_len);
    ASSERT_EQ(warp.src_x0, resample.x.out_off);
    ASSERT_EQ(warp.src_y0, resample.y.out_off);
    ASSERT_EQ(Warped(c, resample, warp), Warped(c, c.resample, c.warp))
        << "case " << i << ": " << w << "x" << h << " -> " << rw << "x" << rh << ", angle " << a.angle << ", window "
        << x0 << "," << y0 << " " << ow << "x" << oh;
  }
  EXPECT_GT(narrowed, cases / 2);  // the test must exercise the narrowed path
}

TEST(WarpWindow, SeedRotationAndCropReadLessThanTheImage) {
  // The seed pipeline: Resize(268) of a 500 x 375 image (357 x 268), RandomRotation(20), then
  // RandomCrop(224) at the centre.
  std::mt19937 rng(3);
  for (const double angle : {0.0, 5.0, -12.0, 20.0}) {
    AffineParams a;
    a.angle = angle;
    const Case c = MakeCase(rng, 500, 375, 357, 268, a, false, false, (357 - 224) / 2, (268 - 224) / 2, 224, 224, false);
    ResizeParams resample = c.resample;
    WarpParams warp = c.warp;
    ASSERT_TRUE(WindowWarpSource(&resample, &warp)) << angle;
    const double share = static_cast<double>(resample.x.out_len) * resample.y.out_len / (357.0 * 268.0);
    EXPECT_LT(share, angle == 0.0 ? 0.56 : 0.9) << angle;
    // What it shrinks is what the decode reads too: the resample's input span.
    int lo, hi;
    InputSpan(resample.x, resample.filter, resample.antialias, &lo, &hi);
    EXPECT_GT(lo, 0) << angle;
    EXPECT_LT(hi, 500) << angle;
    ASSERT_EQ(Warped(c, resample, warp), Warped(c, c.resample, c.warp)) << angle;
  }
}

TEST(WarpWindow, LeavesAloneWhatItCannotNarrow) {
  std::mt19937 rng(5);
  AffineParams a;
  a.angle = 10.0;
  const Case c = MakeCase(rng, 100, 80, 100, 80, a, true, false, 30, 20, 20, 20, false);
  {  // a perspective warp
    ResizeParams r = c.resample;
    WarpParams w = c.warp;
    w.perspective = true;
    EXPECT_FALSE(WindowWarpSource(&r, &w));
  }
  {  // a resample whose output is flipped or already a window
    ResizeParams r = c.resample;
    WarpParams w = c.warp;
    r.x.flip = true;
    EXPECT_FALSE(WindowWarpSource(&r, &w));
    r = c.resample;
    r.y.out_off = 3;
    EXPECT_FALSE(WindowWarpSource(&r, &w));
  }
  {  // a window of padding only, and no warp
    ResizeParams r = c.resample;
    WarpParams w = c.warp;
    w.x = WarpAxis{200, 10, false};
    EXPECT_FALSE(WindowWarpSource(&r, &w));
    w = c.warp;
    w.enabled = false;
    EXPECT_FALSE(WindowWarpSource(&r, &w));
  }
  {  // the whole image read: nothing to narrow
    ResizeParams r = c.resample;
    WarpParams w = c.warp;
    w.x = WarpAxis{0, 100, false}, w.y = WarpAxis{0, 80, false};
    EXPECT_FALSE(WindowWarpSource(&r, &w));
    EXPECT_EQ(w.src_x0, 0);
    EXPECT_EQ(r.x.out_len, 100);
  }
}

}  // namespace
}  // namespace sluice
