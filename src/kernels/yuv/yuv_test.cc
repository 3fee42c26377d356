// YUV 4:2:0 to RGB: hand-computed pixels, and the CPU kernel against the reference on random
// pictures of odd and even sizes, I420 and NV12, every matrix and range.
#include "kernels/yuv/yuv_cpu.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <vector>

#include "kernels/yuv/yuv_ref.h"

namespace sluice {
namespace {

// One pixel through the CPU kernel (a 1x1 picture).
std::vector<uint8_t> Pixel(int y, int u, int v, YuvMatrix matrix, bool full_range) {
  const uint8_t py = static_cast<uint8_t>(y), pu = static_cast<uint8_t>(u), pv = static_cast<uint8_t>(v);
  YuvView in{&py, &pu, &pv, 1, 1, 1, 1, 1, matrix, full_range};
  std::vector<uint8_t> rgb(3);
  YuvToRgbCpu(in, MutableImageView{rgb.data(), 1, 1, 3, 3});
  return rgb;
}

TEST(Yuv, HandComputedPixels) {
  using V = std::vector<uint8_t>;
  // Limited range: Y 16 is black, 235 white; (126 - 16) * 255 / 219 = 128.08 -> grey 128.
  EXPECT_EQ(Pixel(16, 128, 128, YuvMatrix::kBt601, false), (V{0, 0, 0}));
  EXPECT_EQ(Pixel(235, 128, 128, YuvMatrix::kBt601, false), (V{255, 255, 255}));
  EXPECT_EQ(Pixel(126, 128, 128, YuvMatrix::kBt709, false), (V{128, 128, 128}));
  // BT.601 red (81, 90, 240): R = 65 * 255/219 + 112 * 255/224 * 1.402 = 254.44, G = -0.48,
  // B = -0.97 -> (254, 0, 0). Green (145, 54, 34): (0.18, 255.61, 0.93) -> (0, 255, 1).
  EXPECT_EQ(Pixel(81, 90, 240, YuvMatrix::kBt601, false), (V{254, 0, 0}));
  EXPECT_EQ(Pixel(145, 54, 34, YuvMatrix::kBt601, false), (V{0, 255, 1}));
  // BT.709 red (63, 102, 240): (255.51, 0.58, -0.20) -> (255, 1, 0).
  EXPECT_EQ(Pixel(63, 102, 240, YuvMatrix::kBt709, false), (V{255, 1, 0}));
  // Full range: Y is the grey level; V 255 adds 127 * 1.402 = 178.05 to red.
  EXPECT_EQ(Pixel(50, 128, 128, YuvMatrix::kBt601, true), (V{50, 50, 50}));
  EXPECT_EQ(Pixel(50, 128, 255, YuvMatrix::kBt601, true)[0], 228);
}

struct Picture {
  std::vector<uint8_t> y, uv;
  YuvView view;
};

// A random picture with padded rows, its chroma as I420 planes or one NV12 plane.
Picture RandomPicture(int h, int w, bool nv12, std::mt19937* rng) {
  Picture p;
  const int ch = (h + 1) / 2, cw = (w + 1) / 2, ys = w + 5, cs = nv12 ? cw * 2 + 3 : cw + 3;
  std::uniform_int_distribution<int> byte(0, 255);
  p.y.resize(static_cast<size_t>(ys) * h);
  p.uv.resize(static_cast<size_t>(cs) * ch * (nv12 ? 1 : 2));
  for (auto& b : p.y) b = static_cast<uint8_t>(byte(*rng));
  for (auto& b : p.uv) b = static_cast<uint8_t>(byte(*rng));
  p.view.y = p.y.data();
  p.view.y_stride = ys;
  p.view.uv_stride = cs;
  p.view.height = h;
  p.view.width = w;
  p.view.u = p.uv.data();
  p.view.v = nv12 ? p.uv.data() + 1 : p.uv.data() + static_cast<size_t>(cs) * ch;
  p.view.uv_step = nv12 ? 2 : 1;
  return p;
}

TEST(Yuv, CpuMatchesReference) {
  std::mt19937 rng(7);
  for (const auto& [h, w] : {std::pair{1, 1}, {2, 2}, {5, 7}, {16, 9}, {33, 64}}) {
    for (const bool nv12 : {false, true}) {
      for (const YuvMatrix m : {YuvMatrix::kBt601, YuvMatrix::kBt709, YuvMatrix::kBt2020}) {
        for (const bool full : {false, true}) {
          Picture p = RandomPicture(h, w, nv12, &rng);
          p.view.matrix = m;
          p.view.full_range = full;
          const std::vector<uint8_t> want = YuvToRgbRef(p.view);
          std::vector<uint8_t> got(want.size());
          YuvToRgbCpu(p.view, MutableImageView{got.data(), h, w, 3, static_cast<ptrdiff_t>(w) * 3});
          int worst = 0;
          for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
          // Fixed point against double: a value within rounding of .5 may land one step apart.
          EXPECT_LE(worst, 1) << h << "x" << w << " nv12=" << nv12 << " matrix=" << static_cast<int>(m)
                              << " full=" << full;
        }
      }
    }
  }
}

TEST(Yuv, Nv12AndI420GiveTheSamePixels) {
  std::mt19937 rng(3);
  Picture i420 = RandomPicture(6, 5, false, &rng);
  // The same chroma interleaved.
  Picture nv12 = RandomPicture(6, 5, true, &rng);
  nv12.y = i420.y;
  nv12.view.y = nv12.y.data();
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      nv12.uv[static_cast<size_t>(r * nv12.view.uv_stride + 2 * c)] = i420.view.u[r * i420.view.uv_stride + c];
      nv12.uv[static_cast<size_t>(r * nv12.view.uv_stride + 2 * c + 1)] = i420.view.v[r * i420.view.uv_stride + c];
    }
  std::vector<uint8_t> a(6 * 5 * 3), b(a.size());
  YuvToRgbCpu(i420.view, MutableImageView{a.data(), 6, 5, 3, 15});
  YuvToRgbCpu(nv12.view, MutableImageView{b.data(), 6, 5, 3, 15});
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace sluice
