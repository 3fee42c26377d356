// Erasing (Cutout): the drawn rectangles and the CPU kernels against the reference code's mask
// (erase_ref.h), with centres drawn independently from the same random streams.
#include "kernels/erase/erase_cpu.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include "core/half.h"
#include "kernels/erase/erase_ref.h"

namespace sluice {
namespace {

TEST(Erase, HandComputedRectangles) {
  // length 4 at (y, x) = (1, 5) in a 6 x 4 image: rows [-1, 3) -> [0, 3), columns [3, 7) -> [3, 6).
  EraseOps ops;
  EraseRect rect;  // [3, 6) x [0, 3)
  rect.x0 = 3;
  rect.x1 = 6;
  rect.y1 = 3;
  ops.rects[ops.num++] = rect;
  std::vector<uint8_t> img(6 * 4 * 3, 9);
  ErasePixelsCpu(ops, MutableImageView{img.data(), 4, 6, 3, 18});
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 6; ++x)
      EXPECT_EQ(img[static_cast<size_t>(y * 6 + x) * 3 + 1], (y < 3 && x >= 3) ? 0 : 9) << x << "," << y;
  // The same rectangle after Normalize leaves pixels alone and zeroes the finished sample.
  ops.rects[0].finished = true;
  std::vector<uint8_t> pixels(6 * 4 * 3, 9);
  ErasePixelsCpu(ops, MutableImageView{pixels.data(), 4, 6, 3, 18});
  EXPECT_EQ(pixels, std::vector<uint8_t>(6 * 4 * 3, 9));
  std::vector<float> chw(3 * 6 * 4, 2.5f);
  EraseFinishedCpu(ops, chw.data(), 4, 6, DType::kFloat32, Layout::kNCHW);
  EXPECT_EQ(chw[2 * 24 + 0 * 6 + 3], 0.0f);
  EXPECT_EQ(chw[2 * 24 + 3 * 6 + 3], 2.5f);
  EXPECT_EQ(chw[0 * 24 + 2 * 6 + 2], 2.5f);
}

TEST(Erase, CutoutMatchesTheReferenceMaskInEveryLayout) {
  std::mt19937 gen(3);
  for (int iter = 0; iter < 40; ++iter) {
    const int w = 1 + static_cast<int>(gen() % 70), h = 1 + static_cast<int>(gen() % 70);
    const int holes = 1 + static_cast<int>(gen() % 4), length = 1 + static_cast<int>(gen() % 40);
    // Cutout's squares about random centres, clipped at the edges, as finished-stage rectangles.
    std::vector<std::pair<int, int>> centres;
    EraseOps ops;
    for (int k = 0; k < holes; ++k) {
      const int y = static_cast<int>(gen() % static_cast<unsigned>(h));
      const int x = static_cast<int>(gen() % static_cast<unsigned>(w));
      centres.emplace_back(y, x);
      EraseRect& r = ops.rects[ops.num++];
      r.y0 = std::clamp(y - length / 2, 0, h), r.y1 = std::clamp(y + length / 2, 0, h);
      r.x0 = std::clamp(x - length / 2, 0, w), r.x1 = std::clamp(x + length / 2, 0, w);
      r.finished = true;
    }
    std::vector<float> want(static_cast<size_t>(3) * h * w);
    for (size_t k = 0; k < want.size(); ++k) want[k] = 1.0f + static_cast<float>(gen() % 100);
    const std::vector<float> chw = want;
    ref::CutoutChw(&want, h, w, centres, length);

    std::vector<float> got = chw;
    EraseFinishedCpu(ops, got.data(), h, w, DType::kFloat32, Layout::kNCHW);
    ASSERT_EQ(got, want) << "iter " << iter;
    // NHWC float16 and uint8: the same zeros.
    std::vector<uint16_t> f16(want.size());
    std::vector<uint8_t> u8(want.size());
    for (int c = 0; c < 3; ++c)
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
          const float v = chw[(static_cast<size_t>(c) * h + y) * w + x];
          f16[(static_cast<size_t>(y) * w + x) * 3 + c] = FloatToHalfBits(v);
          u8[(static_cast<size_t>(y) * w + x) * 3 + c] = static_cast<uint8_t>(v);
        }
    EraseFinishedCpu(ops, f16.data(), h, w, DType::kFloat16, Layout::kNHWC);
    std::vector<uint8_t> pixels = u8;
    EraseOps before = ops;
    for (int k = 0; k < before.num; ++k) before.rects[k].finished = false;
    ErasePixelsCpu(before, MutableImageView{pixels.data(), h, w, 3, static_cast<ptrdiff_t>(w) * 3});
    for (int c = 0; c < 3; ++c)
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
          const float v = want[(static_cast<size_t>(c) * h + y) * w + x];
          const size_t k = (static_cast<size_t>(y) * w + x) * 3 + c;
          ASSERT_EQ(HalfBitsToFloat(f16[k]), v == 0.0f ? 0.0f : HalfBitsToFloat(FloatToHalfBits(v)));
          ASSERT_EQ(pixels[k], static_cast<uint8_t>(v));
        }
  }
}

}  // namespace
}  // namespace sluice
