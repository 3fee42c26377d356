#include "ops/erase_ops.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace sluice {
namespace {

// Cutout draws each hole's centre as the reference code does, y then x, uniform over the image,
// from the op's own stream, and clips the square [c - length/2, c + length/2) at the edges.
TEST(EraseOpsTest, CutoutDrawsCentresAsTheReferenceCode) {
  std::mt19937 gen(3);
  for (int iter = 0; iter < 40; ++iter) {
    const int w = 1 + static_cast<int>(gen() % 70), h = 1 + static_cast<int>(gen() % 70);
    const transforms::Cutout t{1 + static_cast<int>(gen() % 4), 1 + static_cast<int>(gen() % 40)};
    EraseOps ops;
    SampleRng rng(7, 1, static_cast<uint64_t>(iter), 3);
    DrawCutout(rng, w, h, t, true, &ops);
    ASSERT_EQ(ops.num, t.n_holes);
    SampleRng again(7, 1, static_cast<uint64_t>(iter), 3);
    for (int k = 0; k < t.n_holes; ++k) {
      const int y = static_cast<int>(again.RandInt(0, h));
      const int x = static_cast<int>(again.RandInt(0, w));
      const EraseRect& r = ops.rects[k];
      EXPECT_EQ(r.y0, std::clamp(y - t.length / 2, 0, h)) << "iter " << iter << " hole " << k;
      EXPECT_EQ(r.y1, std::clamp(y + t.length / 2, 0, h));
      EXPECT_EQ(r.x0, std::clamp(x - t.length / 2, 0, w));
      EXPECT_EQ(r.x1, std::clamp(x + t.length / 2, 0, w));
      EXPECT_TRUE(r.finished);
    }
  }
}

}  // namespace
}  // namespace sluice
