#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "kernels/orient/orient_cpu.h"
#include "kernels/orient/orient_params.h"
#include "kernels/orient/orient_ref.h"

namespace sluice {
namespace {

RefImage Random(int w, int h, unsigned seed) {
  std::mt19937 gen(seed);
  RefImage im;
  im.w = w;
  im.h = h;
  im.px.resize(static_cast<size_t>(w) * h * 3);
  for (auto& b : im.px) b = static_cast<uint8_t>(gen());
  return im;
}

RefImage RunCpu(int orientation, const RefImage& in) {
  RefImage out;
  out.w = orientation >= 5 ? in.h : in.w;
  out.h = orientation >= 5 ? in.w : in.h;
  out.px.assign(in.px.size(), 0);
  OrientCpu(orientation, ImageView{in.px.data(), in.h, in.w, 3, static_cast<ptrdiff_t>(in.w) * 3},
            MutableImageView{out.px.data(), out.h, out.w, 3, static_cast<ptrdiff_t>(out.w) * 3});
  return out;
}

RefImage SubImage(RefImage a, const Rect& r) {
  RefImage b;
  b.w = r.w;
  b.h = r.h;
  for (int y = r.y; y < r.y + r.h; ++y)
    for (int x = r.x; x < r.x + r.w; ++x)
      for (int c = 0; c < 3; ++c) b.px.push_back(a.at(x, y)[c]);
  return b;
}

// Labels a 3x2 image with one letter per pixel (in channel 0) so orientations read by eye.
RefImage Letters() {
  RefImage im;
  im.w = 3;
  im.h = 2;
  for (char ch : std::string("abcdef"))
    for (int c = 0; c < 3; ++c) im.px.push_back(static_cast<uint8_t>(ch));
  return im;
}

std::string Rows(const RefImage& im) {
  std::string s;
  for (int y = 0; y < im.h; ++y) {
    if (y) s += '/';
    for (int x = 0; x < im.w; ++x) s += static_cast<char>(im.px[(static_cast<size_t>(y) * im.w + x) * 3]);
  }
  return s;
}

TEST(OrientTest, HandDrawnOrientations) {
  // Stored:  a b c     EXIF 6 means "rotate 90 degrees clockwise to display" (PIL's
  //          d e f     exif_transpose uses ROTATE_270, i.e. 270 counter-clockwise).
  const char* expected[9] = {nullptr,
                             "abc/def",      // 1 as stored
                             "cba/fed",      // 2 mirror left-right
                             "fed/cba",      // 3 rotate 180
                             "def/abc",      // 4 mirror top-bottom
                             "ad/be/cf",     // 5 transpose
                             "da/eb/fc",     // 6 rotate 90 clockwise
                             "fc/eb/da",     // 7 transverse
                             "cf/be/ad"};    // 8 rotate 90 counter-clockwise
  for (int o = 1; o <= 8; ++o) {
    EXPECT_EQ(Rows(RunCpu(o, Letters())), expected[o]) << "cpu, orientation " << o;
    EXPECT_EQ(Rows(OrientRef(o, Letters())), expected[o]) << "ref, orientation " << o;
  }
}

TEST(OrientTest, CpuEqualsReferenceOnNonSquareImages) {
  for (int w : {1, 2, 5, 16}) {
    for (int h : {1, 3, 7}) {
      const RefImage in = Random(w, h, static_cast<unsigned>(w * 31 + h));
      for (int o = 1; o <= 8; ++o) {
        const RefImage got = RunCpu(o, in), want = OrientRef(o, in);
        ASSERT_EQ(got.w, want.w);
        ASSERT_EQ(got.h, want.h);
        ASSERT_EQ(got.px, want.px) << w << "x" << h << " orientation " << o;
      }
    }
  }
}

TEST(OrientTest, SourceAndDestAreInverse) {
  const int sw = 7, sh = 4;
  for (int o = 1; o <= 8; ++o) {
    const int dw = o >= 5 ? sh : sw, dh = o >= 5 ? sw : sh;
    for (int y = 0; y < dh; ++y)
      for (int x = 0; x < dw; ++x) {
        int sx, sy, bx, by;
        OrientSource(o, sw, sh, x, y, &sx, &sy);
        ASSERT_TRUE(sx >= 0 && sx < sw && sy >= 0 && sy < sh) << o;
        OrientDest(o, sw, sh, sx, sy, &bx, &by);
        ASSERT_EQ(bx, x) << "orientation " << o;
        ASSERT_EQ(by, y) << "orientation " << o;
      }
  }
}

TEST(OrientTest, RectanglesMapBothWaysAndAgreeWithPixels) {
  std::mt19937 gen(5);
  const int sw = 13, sh = 8;
  const RefImage stored = Random(sw, sh, 77);
  for (int o = 1; o <= 8; ++o) {
    const RefImage displayed = OrientRef(o, stored);
    for (int iter = 0; iter < 200; ++iter) {
      Rect r;
      r.x = static_cast<int>(gen() % sw);
      r.y = static_cast<int>(gen() % sh);
      r.w = 1 + static_cast<int>(gen() % static_cast<unsigned>(sw - r.x));
      r.h = 1 + static_cast<int>(gen() % static_cast<unsigned>(sh - r.y));
      const Rect d = DisplayRect(o, sw, sh, r);
      ASSERT_EQ(StoredRect(o, sw, sh, d), r) << "orientation " << o;
      ASSERT_EQ(d.w, o >= 5 ? r.h : r.w);
      ASSERT_EQ(d.h, o >= 5 ? r.w : r.h);
      ASSERT_GE(d.x, 0);
      ASSERT_GE(d.y, 0);
      ASSERT_LE(d.x + d.w, displayed.w);
      ASSERT_LE(d.y + d.h, displayed.h);
      // Orienting the stored rectangle's pixels as a whole image gives the displayed
      // rectangle of the fully oriented image.
      ASSERT_EQ(OrientRef(o, SubImage(stored, r)).px, SubImage(displayed, d).px)
          << "orientation " << o << " rect " << r.x << "," << r.y << " " << r.w << "x" << r.h;
      ASSERT_EQ(RunCpu(o, SubImage(stored, r)).px, SubImage(displayed, d).px);
    }
    // And from the displayed side.
    const int dw = displayed.w, dh = displayed.h;
    for (int iter = 0; iter < 100; ++iter) {
      Rect d;
      d.x = static_cast<int>(gen() % static_cast<unsigned>(dw));
      d.y = static_cast<int>(gen() % static_cast<unsigned>(dh));
      d.w = 1 + static_cast<int>(gen() % static_cast<unsigned>(dw - d.x));
      d.h = 1 + static_cast<int>(gen() % static_cast<unsigned>(dh - d.y));
      const Rect r = StoredRect(o, sw, sh, d);
      ASSERT_EQ(DisplayRect(o, sw, sh, r), d);
      ASSERT_EQ(OrientRef(o, SubImage(stored, r)).px, SubImage(displayed, d).px);
    }
  }
}

}  // namespace
}  // namespace sluice
