// The colour steps: hand-computed pixels, the CPU kernel against the whole-image reference on
// random images and step lists, and the GPU kernel (with the finish) against the CPU's bytes.
#include "kernels/color/color_cpu.h"

#include <gtest/gtest.h>

#include <iterator>
#include <random>
#include <vector>

#include "kernels/color/color_ref.h"

namespace sluice {
namespace {

ColorStep Step(ColorKind kind, float factor) {
  return ColorStep{kind, factor, static_cast<float>(1.0 - static_cast<double>(factor))};
}

ColorOps Ops(std::initializer_list<ColorStep> steps) {
  ColorOps ops;
  for (const ColorStep& s : steps) {
    ops.steps[ops.num_steps++] = s;
    if (NeedsStats(s.kind)) ++ops.num_stats;
  }
  return ops;
}

std::vector<uint8_t> Colored(const ColorOps& ops, std::vector<uint8_t> px, int w) {
  const int h = static_cast<int>(px.size() / 3 / static_cast<size_t>(w));
  ApplyColorCpu(ops, MutableImageView{px.data(), h, w, 3, static_cast<ptrdiff_t>(w) * 3});
  return px;
}

TEST(Color, HandComputedPixels) {
  const std::vector<uint8_t> px = {100, 200, 250, 0, 0, 0};
  // Brightness 1.5: 150, 300 -> 255, 375 -> 255.
  EXPECT_EQ(Colored(Ops({Step(ColorKind::kBrightness, 1.5f)}), px, 2),
            (std::vector<uint8_t>{150, 255, 255, 0, 0, 0}));
  // Luma of (100, 200, 250) = 29.89 + 117.4 + 28.5 = 175.79: grayscale truncates it.
  EXPECT_EQ(Colored(Ops({Step(ColorKind::kGrayscale, 0.f)}), px, 2),
            (std::vector<uint8_t>{175, 175, 175, 0, 0, 0}));
  // Saturation 0 blends fully to the floored luma; 2 doubles the distance from it.
  EXPECT_EQ(Colored(Ops({Step(ColorKind::kSaturation, 0.f)}), px, 2),
            (std::vector<uint8_t>{175, 175, 175, 0, 0, 0}));
  // 2 * 100 - 175 = 25, 2 * 200 - 175 = 225, 2 * 250 - 175 = 325 -> 255.
  EXPECT_EQ(Colored(Ops({Step(ColorKind::kSaturation, 2.f)}), px, 2),
            (std::vector<uint8_t>{25, 225, 255, 0, 0, 0}));
  // Contrast 0: every value becomes the mean luma, (175 + 0) / 2 = 87.5 -> 87.
  EXPECT_EQ(Colored(Ops({Step(ColorKind::kContrast, 0.f)}), px, 2),
            (std::vector<uint8_t>{87, 87, 87, 87, 87, 87}));
  // Contrast after brightness blends with the brightened image's mean: luma(150, 255, 255) =
  // 44.835 + 149.685 + 29.07 = 223.59 -> 223, mean 111.5; factor 0 gives 111.
  EXPECT_EQ(Colored(Ops({Step(ColorKind::kBrightness, 1.5f), Step(ColorKind::kContrast, 0.f)}), px, 2),
            (std::vector<uint8_t>{111, 111, 111, 111, 111, 111}));
  // Hue +0.5 turns red into cyan, +1/3 into green.
  EXPECT_EQ(Colored(Ops({Step(ColorKind::kHue, 0.5f)}), {255, 0, 0}, 1), (std::vector<uint8_t>{0, 255, 255}));
  EXPECT_EQ(Colored(Ops({Step(ColorKind::kHue, 1.0f / 3.0f)}), {255, 0, 0}, 1), (std::vector<uint8_t>{0, 255, 0}));
}

TEST(Color, AutoAugmentStepsByHand) {
  const std::vector<uint8_t> px = {100, 200, 250, 10, 20, 30};
  // Posterize to 2 bits keeps 0xC0: 100 -> 64, 200 -> 192, 250 -> 192, the rest 0.
  EXPECT_EQ(Colored(Ops({ColorStep{ColorKind::kPosterize, 192.f, 0.f}}), px, 2),
            (std::vector<uint8_t>{64, 192, 192, 0, 0, 0}));
  // Solarize at 200: 200 and 250 invert (55, 5); the rest stay.
  EXPECT_EQ(Colored(Ops({ColorStep{ColorKind::kSolarize, 200.f, 0.f}}), px, 2),
            (std::vector<uint8_t>{100, 55, 5, 10, 20, 30}));
  // Autocontrast stretches each channel from [min, max] to [0, 255]: the max maps to
  // (max - min) / (float32(max - min) / 255), which truncates to 254 or 255.
  const std::vector<uint8_t> ac = Colored(Ops({ColorStep{ColorKind::kAutoContrast, 0.f, 0.f}}), px, 2);
  EXPECT_EQ(ac[3], 0);
  EXPECT_EQ(ac[4], 0);
  for (int c = 0; c < 3; ++c) EXPECT_GE(ac[static_cast<size_t>(c)], 254);
  // Equalize of a channel with 4 pixels 0, 0, 0, 255: step = (4 - 1) / 255 = 0: unchanged.
  const std::vector<uint8_t> flat = {0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 255};
  EXPECT_EQ(Colored(Ops({ColorStep{ColorKind::kEqualize, 0.f, 0.f}}), flat, 4), flat);
  // 510 pixels: 255 of value 10, 255 of value 20 (last bin 20): step = 255 / 255 = 1;
  // lut[k] = cum[k - 1]: lut[10] = 0, lut[20] = 255.
  std::vector<uint8_t> two(510 * 3);
  for (size_t i = 0; i < 510; ++i) two[i * 3] = two[i * 3 + 1] = two[i * 3 + 2] = i < 255 ? 10 : 20;
  const std::vector<uint8_t> eq = Colored(Ops({ColorStep{ColorKind::kEqualize, 0.f, 0.f}}), two, 510);
  EXPECT_EQ(eq[0], 0);
  EXPECT_EQ(eq[3 * 509], 255);
}

TEST(Color, PermuteReordersChannelsByHand) {
  const std::vector<uint8_t> px = {10, 20, 30, 200, 100, 0};
  const std::vector<std::vector<uint8_t>> want = {{10, 20, 30, 200, 100, 0}, {10, 30, 20, 200, 0, 100},
                                                  {20, 10, 30, 100, 200, 0}, {20, 30, 10, 100, 0, 200},
                                                  {30, 10, 20, 0, 200, 100}, {30, 20, 10, 0, 100, 200}};
  for (int k = 0; k < 6; ++k)
    EXPECT_EQ(Colored(Ops({ColorStep{ColorKind::kPermute, static_cast<float>(k), 0.f}}), px, 2), want[k]) << k;
}

TEST(Color, HueZeroKeepsPixelsWithinOneLevel) {
  std::mt19937 rng(7);
  std::vector<uint8_t> px(3 * 4096);
  for (uint8_t& v : px) v = static_cast<uint8_t>(rng());
  const std::vector<uint8_t> out = Colored(Ops({Step(ColorKind::kHue, 0.f)}), px, 64);
  for (size_t i = 0; i < px.size(); ++i) ASSERT_LE(std::abs(int(out[i]) - int(px[i])), 1) << i;
}

TEST(Color, CpuMatchesReferenceOnRandomStepLists) {
  std::mt19937 rng(1234);
  const ColorKind kinds[] = {ColorKind::kBrightness, ColorKind::kContrast,     ColorKind::kSaturation,
                             ColorKind::kHue,        ColorKind::kGrayscale,    ColorKind::kPosterize,
                             ColorKind::kSolarize,   ColorKind::kAutoContrast, ColorKind::kEqualize,
                             ColorKind::kPermute};
  for (int trial = 0; trial < 90; ++trial) {
    const int w = 7 + trial % 23, h = 5 + trial % 17;
    std::vector<uint8_t> px(static_cast<size_t>(w) * h * 3);
    // Smooth colours plus noise: pixels near every hue sector and saturation.
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        for (int c = 0; c < 3; ++c)
          px[(static_cast<size_t>(y) * w + x) * 3 + c] =
              static_cast<uint8_t>((x * (37 + 11 * c) + y * (53 - 7 * c) + static_cast<int>(rng() % 40)) % 256);
    ColorOps ops;
    const int n = 1 + trial % 5;
    for (int i = 0; i < n; ++i) {
      const ColorKind k = kinds[rng() % std::size(kinds)];
      std::uniform_real_distribution<float> f(0.f, 2.f), hue(-0.5f, 0.5f);
      float factor = k == ColorKind::kHue ? hue(rng) : f(rng);
      if (k == ColorKind::kPosterize) factor = static_cast<float>((0xFF00 >> (rng() % 9)) & 0xFF);
      if (k == ColorKind::kPermute) factor = static_cast<float>(rng() % 6);
      if (k == ColorKind::kSolarize) factor = static_cast<float>(rng() % 256) + (rng() % 2 ? 0.5f : 0.0f);
      ops.steps[ops.num_steps++] = Step(k, factor);
      if (NeedsStats(k)) ++ops.num_stats;
    }
    std::vector<uint8_t> want = px;
    color_ref::Apply(ops, want);
    EXPECT_EQ(Colored(ops, px, w), want) << "trial " << trial;
  }
}

}  // namespace
}  // namespace sluice
