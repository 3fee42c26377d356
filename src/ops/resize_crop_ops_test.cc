#include "ops/resize_crop_ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ops/torch_math.h"

namespace sluice {
namespace {

using transforms::RandomCrop;
using transforms::RandomResizedCrop;
using transforms::Resize;

TEST(ResizeCropOpsTest, RoundHalfEvenIsPythonRound) {
  EXPECT_EQ(RoundHalfEven(0.5), 0);
  EXPECT_EQ(RoundHalfEven(1.5), 2);
  EXPECT_EQ(RoundHalfEven(2.5), 2);
  EXPECT_EQ(RoundHalfEven(3.5), 4);
  EXPECT_EQ(RoundHalfEven(-0.5), 0);
  EXPECT_EQ(RoundHalfEven(-1.5), -2);
  EXPECT_EQ(RoundHalfEven(-2.5), -2);
  EXPECT_EQ(RoundHalfEven(58.5), 58);
  EXPECT_EQ(RoundHalfEven(2.4999999), 2);
  EXPECT_EQ(RoundHalfEven(2.5000001), 3);
  EXPECT_EQ(RoundHalfEven(-2.6), -3);
  EXPECT_EQ(RoundHalfEven(7.0), 7);
}

TEST(ResizeCropOpsTest, CenterCropAxisFollowsTorchvision) {
  // Crop inside: start = round((len - size) / 2.0), ties to even.
  EXPECT_EQ(CenterCropAxis(341, 224).start, 58);  // 58.5 -> 58
  EXPECT_EQ(CenterCropAxis(256, 224).start, 16);
  EXPECT_EQ(CenterCropAxis(5, 2).start, 2);       // 1.5 -> 2
  EXPECT_EQ(CenterCropAxis(6, 1).start, 2);       // 2.5 -> 2
  EXPECT_EQ(CenterCropAxis(4, 3).start, 0);       // 0.5 -> 0
  EXPECT_EQ(CenterCropAxis(10, 3).start, 4);      // 3.5 -> 4
  EXPECT_EQ(CenterCropAxis(10, 10).start, 0);
  EXPECT_EQ(CenterCropAxis(10, 3).size, 3);
  // Crop larger than the image: torchvision pads (diff // 2) before, the rest after.
  EXPECT_EQ(CenterCropAxis(3, 8).start, -2);  // pad 2 before, 3 after
  EXPECT_EQ(CenterCropAxis(3, 8).size, 8);
  EXPECT_EQ(CenterCropAxis(3, 4).start, 0);   // pad 0 before, 1 after
  EXPECT_EQ(CenterCropAxis(2, 7).start, -2);
  EXPECT_EQ(CenterCropAxis(100, 224).start, -62);
}

std::pair<int, int> Resized(int w, int h, Resize t) {
  int ow = -1, oh = -1;
  ResizedSize(w, h, t, &ow, &oh);
  return {ow, oh};
}

TEST(ResizeCropOpsTest, ResizedSizeFollowsTorchvision) {
  using P = std::pair<int, int>;  // (width, height)
  Resize r;
  r.height = 256;  // Resize(256): the shorter edge becomes 256, the other int(256 * long / short)
  EXPECT_EQ(Resized(500, 375, r), P(341, 256));  // 256 * 500 / 375 = 341.33
  EXPECT_EQ(Resized(375, 500, r), P(256, 341));
  EXPECT_EQ(Resized(300, 300, r), P(256, 256));
  EXPECT_EQ(Resized(640, 427, r), P(383, 256));  // 383.7 truncates
  EXPECT_EQ(Resized(100, 50, r), P(512, 256));   // upscaling
  r.height = 224;
  EXPECT_EQ(Resized(333, 500, r), P(224, 336));  // 336.34
  // max_size caps the longer edge: new_short = int(max_size * new_short / new_long).
  r.height = 256;
  r.max_size = 1000;
  EXPECT_EQ(Resized(1000, 200, r), P(1000, 200));  // long 1280 > 1000: short int(1000*256/1280)
  EXPECT_EQ(Resized(500, 375, r), P(341, 256));    // under the cap: unchanged
  r.max_size = 300;
  EXPECT_EQ(Resized(500, 375, r), P(300, 225));    // int(300 * 256 / 341) = 225
  EXPECT_EQ(Resized(375, 500, r), P(225, 300));
  // Resize((h, w)) is taken as is.
  Resize fixed;
  fixed.height = 100;
  fixed.width = 50;
  EXPECT_EQ(Resized(500, 375, fixed), P(50, 100));
}

// (w - 0.5)(h - 0.5) <= area * s1 etc.: what the rounding of w = round(sqrt(A r)) and
// h = round(sqrt(A / r)) allows for a window drawn with scale s and ratio r.
void ExpectWithinDrawBounds(const Rect& r, int width, int height, const RandomResizedCrop& t) {
  const double area = static_cast<double>(width) * height;
  const double w = r.w, h = r.h;
  EXPECT_LE((w - 0.5) * (h - 0.5), area * t.scale[1] * (1 + 1e-12));
  EXPECT_GE((w + 0.5) * (h + 0.5), area * t.scale[0] * (1 - 1e-12));
  EXPECT_LE((w - 0.5) / (h + 0.5), t.ratio[1] * (1 + 1e-12));
  EXPECT_GE((w + 0.5) / (h - 0.5), t.ratio[0] * (1 - 1e-12));
}

Rect Fallback(int width, int height, const RandomResizedCrop& t) {
  // torchvision's central crop: the ratio clamped into [min(ratio), max(ratio)].
  const double in_ratio = static_cast<double>(width) / height;
  int w = width, h = height;
  if (in_ratio < t.ratio[0]) {
    h = static_cast<int>(std::nearbyint(w / t.ratio[0]));
  } else if (in_ratio > t.ratio[1]) {
    w = static_cast<int>(std::nearbyint(h * t.ratio[1]));
  }
  return Rect{(width - w) / 2, (height - h) / 2, w, h};
}

TEST(ResizeCropOpsTest, ResizedCropWindowInsideAndWithinBounds) {
  RandomResizedCrop t;
  t.height = t.width = 224;
  struct Size {
    int w, h;
  };
  int drawn = 0;
  for (Size s : {Size{500, 375}, Size{375, 500}, Size{64, 64}, Size{1000, 120}, Size{7, 5}}) {
    const Rect fallback = Fallback(s.w, s.h, t);
    for (uint64_t sample = 0; sample < 500; ++sample) {
      SampleRng rng(1, 2, sample, 0);
      const Rect r = DrawResizedCropWindow(rng, s.w, s.h, t);
      ASSERT_GT(r.w, 0);
      ASSERT_GT(r.h, 0);
      ASSERT_GE(r.x, 0);
      ASSERT_GE(r.y, 0);
      ASSERT_LE(r.x + r.w, s.w);
      ASSERT_LE(r.y + r.h, s.h);
      if (r == fallback) continue;
      ++drawn;
      ExpectWithinDrawBounds(r, s.w, s.h, t);
    }
  }
  EXPECT_GT(drawn, 2000);  // the fallback is rare for ordinary images
}

TEST(ResizeCropOpsTest, ResizedCropWindowIsDeterministicPerKey) {
  RandomResizedCrop t;
  t.height = t.width = 224;
  std::set<std::vector<int>> distinct;
  for (uint64_t sample = 0; sample < 100; ++sample) {
    SampleRng a(7, 3, sample, 2), b(7, 3, sample, 2);
    const Rect ra = DrawResizedCropWindow(a, 640, 480, t);
    const Rect rb = DrawResizedCropWindow(b, 640, 480, t);
    ASSERT_EQ(ra, rb);
    distinct.insert({ra.x, ra.y, ra.w, ra.h});
  }
  EXPECT_GT(distinct.size(), 95u);
}

TEST(ResizeCropOpsTest, ResizedCropDrawsScaleAndLogRatioUniformly) {
  // With scale (0.1, 0.5) and ratio (3/4, 4/3) on a 1000x1000 image no draw is rejected, so the
  // area fraction is uniform on [0.1, 0.5] (mean 0.3, sd 0.115) and log(w/h) uniform on
  // [-0.288, 0.288] (mean 0). 4000 draws: standard errors 0.0018 and 0.0026.
  RandomResizedCrop t;
  t.height = t.width = 10;
  t.scale = {0.1, 0.5};
  double sum_area = 0, sum_log = 0, x_frac = 0;
  const int kN = 4000;
  for (int i = 0; i < kN; ++i) {
    SampleRng rng(3, 0, static_cast<uint64_t>(i), 0);
    const Rect r = DrawResizedCropWindow(rng, 1000, 1000, t);
    sum_area += r.w * static_cast<double>(r.h) / 1e6;
    sum_log += std::log(static_cast<double>(r.w) / r.h);
    x_frac += static_cast<double>(r.x) / (1000 - r.w);
  }
  EXPECT_NEAR(sum_area / kN, 0.3, 0.01);
  EXPECT_NEAR(sum_log / kN, 0.0, 0.013);
  EXPECT_NEAR(x_frac / kN, 0.5, 0.025);  // the position is uniform over the valid range
}

TEST(ResizeCropOpsTest, ResizedCropConsumesTheStreamInTorchvisionOrder) {
  // torchvision's RandomResizedCrop.get_params transcribed: up to 10 attempts of (area fraction,
  // then log-ratio); on success the top offset is drawn before the left one. Pinning the order
  // keeps crops reproducible across implementations (CPU, GPU, Python) of the same stream.
  RandomResizedCrop t;
  t.height = t.width = 32;
  int fell_back = 0;
  for (uint64_t sample = 0; sample < 300; ++sample) {
    const int width = 120, height = 40;  // wide enough that some attempts fail
    SampleRng a(9, 1, sample, 4), b(9, 1, sample, 4);
    const Rect got = DrawResizedCropWindow(a, width, height, t);
    Rect want = Fallback(width, height, t);
    bool drawn = false;
    for (int attempt = 0; attempt < 10 && !drawn; ++attempt) {
      const double target_area = width * height * b.Uniform(t.scale[0], t.scale[1]);
      const double aspect = std::exp(b.Uniform(std::log(t.ratio[0]), std::log(t.ratio[1])));
      const int w = RoundHalfEven(std::sqrt(target_area * aspect));
      const int h = RoundHalfEven(std::sqrt(target_area / aspect));
      if (0 < w && w <= width && 0 < h && h <= height) {
        const int i = static_cast<int>(b.RandInt(0, height - h + 1));
        const int j = static_cast<int>(b.RandInt(0, width - w + 1));
        want = Rect{j, i, w, h};
        drawn = true;
      }
    }
    fell_back += drawn ? 0 : 1;
    ASSERT_EQ(got, want) << "sample " << sample;
  }
  EXPECT_LT(fell_back, 300);
}

TEST(ResizeCropOpsTest, RandomCropDrawsTopBeforeLeft) {
  RandomCrop t;
  t.height = 10;
  t.width = 12;
  for (uint64_t sample = 0; sample < 100; ++sample) {
    SampleRng a(5, 5, sample, 1), b(5, 5, sample, 1);
    AxisWindow x, y;
    ASSERT_TRUE(DrawRandomCrop(a, 40, 30, t, &x, &y).ok());
    const int64_t top = b.RandInt(0, 30 - 10 + 1);
    const int64_t left = b.RandInt(0, 40 - 12 + 1);
    EXPECT_EQ(y.start, top);
    EXPECT_EQ(x.start, left);
  }
}

TEST(ResizeCropOpsTest, ResizedCropFallsBackToCenterCropForExtremeRatios) {
  RandomResizedCrop t;
  t.height = t.width = 224;
  for (uint64_t sample = 0; sample < 20; ++sample) {
    SampleRng wide(0, 0, sample, 0), tall(0, 0, sample, 0);
    // 1000x10: every drawn window is taller than 10 rows. Fallback: h = 10,
    // w = round(10 * 4/3) = 13, x = (1000 - 13) // 2 = 493.
    EXPECT_EQ(DrawResizedCropWindow(wide, 1000, 10, t), (Rect{493, 0, 13, 10}));
    // 10x1000: w = 10, h = round(10 / (3/4)) = 13, y = 493.
    EXPECT_EQ(DrawResizedCropWindow(tall, 10, 1000, t), (Rect{0, 493, 10, 13}));
  }
  // The image's ratio within bounds but an area (scale > 1) that can never fit: the whole
  // image.
  t.scale = {1.5, 2.0};
  for (uint64_t sample = 0; sample < 20; ++sample) {
    SampleRng rng(0, 0, sample, 0);
    EXPECT_EQ(DrawResizedCropWindow(rng, 250, 200, t), (Rect{0, 0, 250, 200}));
  }
}

TEST(ResizeCropOpsTest, RandomCropPositionsCoverTheValidRange) {
  RandomCrop t;
  t.height = 5;
  t.width = 7;
  std::set<int> xs, ys;
  for (uint64_t sample = 0; sample < 400; ++sample) {
    SampleRng rng(1, 1, sample, 3);
    AxisWindow x, y;
    ASSERT_TRUE(DrawRandomCrop(rng, 10, 8, t, &x, &y).ok());
    ASSERT_EQ(x.size, 7);
    ASSERT_EQ(y.size, 5);
    xs.insert(x.start);
    ys.insert(y.start);
  }
  EXPECT_EQ(xs, (std::set<int>{0, 1, 2, 3}));
  EXPECT_EQ(ys, (std::set<int>{0, 1, 2, 3}));
  // Exactly the image size: nothing to draw.
  SampleRng rng(1, 1, 1, 3);
  AxisWindow x, y;
  ASSERT_TRUE(DrawRandomCrop(rng, 7, 5, t, &x, &y).ok());
  EXPECT_EQ(x.start, 0);
  EXPECT_EQ(y.start, 0);
}

TEST(ResizeCropOpsTest, RandomCropWithPadding) {
  // 10x10 image, padding (left 2, top 3, right 4, bottom 5): padded 16 wide, 18 high.
  // A 12 wide, 14 high crop starts at x in [-2, 2], y in [-3, 1].
  RandomCrop t;
  t.height = 14;
  t.width = 12;
  t.padding = {2, 3, 4, 5};
  std::set<int> xs, ys;
  for (uint64_t sample = 0; sample < 400; ++sample) {
    SampleRng rng(2, 0, sample, 0);
    AxisWindow x, y;
    ASSERT_TRUE(DrawRandomCrop(rng, 10, 10, t, &x, &y).ok());
    xs.insert(x.start);
    ys.insert(y.start);
  }
  EXPECT_EQ(xs, (std::set<int>{-2, -1, 0, 1, 2}));
  EXPECT_EQ(ys, (std::set<int>{-3, -2, -1, 0, 1}));
}

TEST(ResizeCropOpsTest, RandomCropPadIfNeeded) {
  // 10x10 image, 14 wide x 16 high crop: torchvision pads the missing 4 columns on both sides
  // (padded 18 wide) and 6 rows on both sides (22 high): x in [-4, 0], y in [-6, 0].
  RandomCrop t;
  t.height = 16;
  t.width = 14;
  t.pad_if_needed = true;
  std::set<int> xs, ys;
  for (uint64_t sample = 0; sample < 400; ++sample) {
    SampleRng rng(4, 0, sample, 0);
    AxisWindow x, y;
    ASSERT_TRUE(DrawRandomCrop(rng, 10, 10, t, &x, &y).ok());
    xs.insert(x.start);
    ys.insert(y.start);
  }
  EXPECT_EQ(xs, (std::set<int>{-4, -3, -2, -1, 0}));
  EXPECT_EQ(ys, (std::set<int>{-6, -5, -4, -3, -2, -1, 0}));
  // With padding too: the missing amount is counted after the explicit padding.
  t.padding = {1, 0, 1, 0};  // 12 wide: 2 short
  xs.clear();
  for (uint64_t sample = 0; sample < 400; ++sample) {
    SampleRng rng(4, 1, sample, 0);
    AxisWindow x, y;
    ASSERT_TRUE(DrawRandomCrop(rng, 10, 10, t, &x, &y).ok());
    xs.insert(x.start);
  }
  // pad_left = 1 + 2 = 3, padded width 12 + 4 = 16: left in [0, 2], start in [-3, -1].
  EXPECT_EQ(xs, (std::set<int>{-3, -2, -1}));
}

TEST(ResizeCropOpsTest, RandomCropTooLargeIsInvalidArgument) {
  RandomCrop t;
  t.height = 12;
  t.width = 11;
  SampleRng rng(0, 0, 0, 0);
  AxisWindow x, y;
  Status s = DrawRandomCrop(rng, 10, 10, t, &x, &y);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "RandomCrop: crop size 12x11 (height x width) is larger than the image size 10x10; "
            "pass pad_if_needed=True to pad small images");
  t.padding = {0, 1, 0, 0};
  s = DrawRandomCrop(rng, 10, 10, t, &x, &y);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("larger than the padded image size 11x10"), std::string::npos)
      << s.message();
  // Fits in one dimension only: still an error.
  t.padding = {0, 0, 0, 0};
  t.height = 10;
  s = DrawRandomCrop(rng, 10, 10, t, &x, &y);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sluice
