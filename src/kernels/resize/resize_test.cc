#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/resize/resize_cpu.h"
#include "kernels/resize/resize_params.h"
#include "kernels/resize/resize_ref.h"

namespace sluice {
namespace {

struct Image {
  int w = 0, h = 0;
  std::vector<uint8_t> px;
  ImageView view() const { return ImageView{px.data(), h, w, 3, static_cast<ptrdiff_t>(w) * 3}; }
  MutableImageView mut() { return MutableImageView{px.data(), h, w, 3, static_cast<ptrdiff_t>(w) * 3}; }
};

Image Blank(int w, int h) { return Image{w, h, std::vector<uint8_t>(static_cast<size_t>(w) * h * 3, 0xCD)}; }

Image FromBytes(int w, int h, std::vector<uint8_t> px) { return Image{w, h, std::move(px)}; }

// A plain resize of a whole axis: PIL's resize of an image of length `len` to `out`.
AxisMap Plain(int len, int out) {
  AxisMap m;
  m.in_lo = 0;
  m.in_hi = len;
  m.origin = 0;
  m.scale = static_cast<double>(len) / out;
  m.resized_len = out;
  m.out_off = 0;
  m.out_len = out;
  return m;
}

// PIL's resize of the crop [lo, hi) of an axis to `out`.
AxisMap Cropped(int lo, int hi, int out) {
  AxisMap m = Plain(hi - lo, out);
  m.in_lo = lo;
  m.in_hi = hi;
  m.origin = lo;
  return m;
}

AxisMap Identity(int len) {
  AxisMap m = Plain(len, len);
  m.identity = true;
  return m;
}

Image RunCpu(const ResizeParams& p, const Image& in, bool allow_simd = true) {
  Image out = Blank(p.x.out_len, p.y.out_len);
  ResizeScratch scratch;
  ResizeCpu(p, in.view(), out.mut(), &scratch, allow_simd);
  return out;
}

Image RunRef(const ResizeParams& p, const Image& in) {
  Image out = Blank(p.x.out_len, p.y.out_len);
  ResizeRef(p, in.view(), out.mut());
  return out;
}

// Gray rows are tested as RGB with equal channels.
Image GrayRow(const std::vector<int>& v) {
  Image im{static_cast<int>(v.size()), 1, {}};
  for (int x : v)
    for (int c = 0; c < 3; ++c) im.px.push_back(static_cast<uint8_t>(x));
  return im;
}

std::vector<int> Channel0(const Image& im) {
  std::vector<int> v;
  for (size_t i = 0; i < im.px.size(); i += 3) v.push_back(im.px[i]);
  return v;
}

// Hand-computed with PIL's formulas (center (i + 0.5) * scale, support = filter support times
// the downscale factor when antialiasing), and confirmed with PIL 13's Image.resize.
TEST(ResizeTest, HandComputedRows) {
  struct Case {
    std::vector<int> in;
    int out;
    Filter filter;
    bool antialias;
    std::vector<int> expect;
  };
  const Case cases[] = {
      // 4 -> 2 bilinear, antialiased: triangle of radius 2, taps (3, 3, 1)/7 and (1, 3, 3)/7.
      {{0, 70, 140, 210}, 2, Filter::kBilinear, true, {50, 160}},
      // Without antialias the triangle keeps radius 1: plain pair averages.
      {{0, 70, 140, 210}, 2, Filter::kBilinear, false, {35, 175}},
      // 2 -> 4 bilinear: a, (3a + b)/4, (a + 3b)/4, b (edge taps renormalized).
      {{0, 200}, 4, Filter::kBilinear, true, {0, 50, 150, 200}},
      // 2 -> 4 bicubic (a = -0.5): pixel 0 has taps W(0.25) = 0.8671875 and W(1.25) = -0.0703125,
      // (100 * 0.8671875 - 200 * 0.0703125) / 0.796875 = 91.2 (PIL: 91 121 179 209).
      {{100, 200}, 4, Filter::kBicubic, true, {91, 121, 179, 209}},
      // 4 -> 2 bicubic, antialiased (PIL: 41 169).
      {{0, 70, 140, 210}, 2, Filter::kBicubic, true, {41, 169}},
      // 8 -> 3, non-integer factor (PIL: 58 122 75 and 61 116 75).
      {{10, 20, 200, 40, 90, 250, 0, 30}, 3, Filter::kBicubic, true, {58, 122, 75}},
      {{10, 20, 200, 40, 90, 250, 0, 30}, 3, Filter::kBilinear, true, {61, 116, 75}},
  };
  for (const Case& k : cases) {
    const Image in = GrayRow(k.in);
    ResizeParams p;
    p.x = Plain(static_cast<int>(k.in.size()), k.out);
    p.y = Identity(1);
    p.filter = k.filter;
    p.antialias = k.antialias;
    EXPECT_EQ(Channel0(RunCpu(p, in)), k.expect) << "cpu, case -> " << k.out;
    EXPECT_EQ(Channel0(RunRef(p, in)), k.expect) << "ref, case -> " << k.out;
    // The same row as a column.
    Image col{1, in.w, in.px};
    std::swap(p.x, p.y);
    EXPECT_EQ(Channel0(RunCpu(p, col)), k.expect) << "cpu column";
  }
}

// A 6x4 RGB image resized by PIL 13 (values printed by numpy from Image.resize).
const std::vector<uint8_t> kPilSrc = {
    99,  206, 239, 189, 230, 118, 144, 73,  8,   228, 231, 190, 155, 112, 158, 208, 7,   204,
    143, 113, 181, 231, 80,  27,  44,  205, 203, 65,  175, 30,  212, 86,  125, 146, 254, 121,
    137, 106, 41,  233, 190, 129, 210, 103, 144, 206, 5,   58,  0,   208, 132, 110, 164, 105,
    179, 27,  31,  2,   68,  38,  105, 211, 147, 18,  113, 245, 135, 100, 108, 109, 158, 190};

TEST(ResizeTest, MatchesPilOnSmallImages) {
  const Image src = FromBytes(6, 4, kPilSrc);
  {
    ResizeParams p;  // im.resize((4, 3), BICUBIC)
    p.x = Plain(6, 4);
    p.y = Plain(4, 3);
    p.filter = Filter::kBicubic;
    const std::vector<uint8_t> pil = {145, 188, 184, 146, 148, 68,  173, 177, 143, 191, 77,  173,
                                      180, 117, 95,  171, 143, 134, 119, 107, 76,  116, 197, 118,
                                      127, 63,  35,  105, 149, 125, 84,  103, 170, 101, 149, 146};
    EXPECT_EQ(RunCpu(p, src).px, pil);
  }
  {
    ResizeParams p;  // im.crop((1, 1, 5, 4)).resize((3, 2), BILINEAR)
    p.x = Cropped(1, 5, 3);
    p.y = Cropped(1, 4, 2);
    const std::vector<uint8_t> pil = {194, 135, 100, 112, 139, 111, 128, 126, 102,
                                      105, 131, 94,  117, 122, 160, 86,  120, 134};
    EXPECT_EQ(RunCpu(p, src).px, pil);
  }
  {
    ResizeParams p;  // im.resize((9, 7), BILINEAR): upscaling, first and last rows/columns
    p.x = Plain(6, 9);
    p.y = Plain(4, 7);
    const Image out = RunCpu(p, src);
    const std::vector<uint8_t> first_row = {99,  206, 239, 144, 218, 179, 181, 204, 100,
                                            152, 99,  26,  186, 152, 99,  216, 211, 185,
                                            167, 132, 163, 182, 60,  181, 208, 7,   204};
    EXPECT_EQ(std::vector<uint8_t>(out.px.begin(), out.px.begin() + 27), first_row);
    const std::vector<uint8_t> last_row = {179, 27,  31,  91,  48,  35,  19,  92,  56,
                                           88,  187, 129, 62,  162, 196, 38,  111, 222,
                                           115, 102, 131, 122, 129, 149, 109, 158, 190};
    EXPECT_EQ(std::vector<uint8_t>(out.px.end() - 27, out.px.end()), last_row);
  }
}

// ---- Random comparison against the reference ----

int RandInt(std::mt19937& g, int lo, int hi) {  // [lo, hi]
  return lo + static_cast<int>(g() % static_cast<unsigned>(hi - lo + 1));
}

double RandReal(std::mt19937& g, double lo, double hi) {
  return lo + (hi - lo) * (static_cast<double>(g()) / 4294967296.0);
}

enum class MapKind { kResize, kIdentity };

// A random but valid map on an input of length `in_len`: a resize of a sub-range (sometimes with
// a fractional origin and a scale that is not len/out, as after DCT scaling), or an identity
// window; shown through a full, partial or padded output window, maybe flipped.
AxisMap RandomMap(std::mt19937& g, int in_len, MapKind kind, bool allow_pad) {
  AxisMap m;
  m.in_lo = RandInt(g, 0, in_len - 1);
  m.in_hi = RandInt(g, m.in_lo + 1, in_len);
  const int len = m.in_hi - m.in_lo;
  if (kind == MapKind::kIdentity) {
    m.identity = true;
    m.scale = 1.0;
    m.origin = RandInt(g, m.in_lo, m.in_hi - 1);
    m.resized_len = RandInt(g, 1, m.in_hi - static_cast<int>(m.origin));
  } else {
    const int r = static_cast<int>(g() % 3);
    m.resized_len = r == 0 ? RandInt(g, 1, std::max(1, len / 3))    // strong downscale
                    : r == 1 ? RandInt(g, 1, len)                    // downscale
                             : RandInt(g, len, 3 * len + 2);          // upscale
    m.scale = static_cast<double>(len) / m.resized_len;
    m.origin = m.in_lo;
    if (g() % 3 == 0) {  // fractional origin and scale, as a map re-expressed after DCT scaling
      m.origin += RandReal(g, -0.5, 0.5);
      m.scale *= RandReal(g, 0.9, 1.1);
    }
  }
  const int pad = static_cast<int>(g() % 3);
  if (pad == 0 || !allow_pad) {
    m.out_off = 0;
    m.out_len = m.resized_len;
  } else if (pad == 1) {  // a window inside
    m.out_off = RandInt(g, 0, m.resized_len - 1);
    m.out_len = RandInt(g, 1, m.resized_len - m.out_off);
  } else {  // a window reaching outside on either side (padding)
    m.out_off = RandInt(g, -6, m.resized_len + 2);
    m.out_len = RandInt(g, 1, m.resized_len + 8);
  }
  m.flip = g() % 2 == 0;
  return m;
}

Image RandomImage(std::mt19937& g, int w, int h) {
  Image im{w, h, std::vector<uint8_t>(static_cast<size_t>(w) * h * 3)};
  // Half noise, half smooth: noise makes large differences, smooth makes ties near .5.
  const bool noise = g() % 2 == 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c)
        im.px[(static_cast<size_t>(y) * w + x) * 3 + c] =
            noise ? static_cast<uint8_t>(g()) : static_cast<uint8_t>((x * 7 + y * 3 + c * 40) % 256);
  return im;
}

bool IsPadding(const AxisMap& m, int k) {
  const int r = m.ResizedIndex(k);
  return r < 0 || r >= m.resized_len;
}

struct DiffStats {
  int64_t pixels = 0, exact = 0;
  int max_diff = 0;
};

void CompareWithRef(const ResizeParams& p, const Image& in, DiffStats* stats, const std::string& what) {
  const Image got = RunCpu(p, in);
  const Image want = RunRef(p, in);
  for (int y = 0; y < got.h; ++y)
    for (int x = 0; x < got.w; ++x)
      for (int c = 0; c < 3; ++c) {
        const size_t i = (static_cast<size_t>(y) * got.w + x) * 3 + c;
        const int d = std::abs(got.px[i] - want.px[i]);
        stats->max_diff = std::max(stats->max_diff, d);
        stats->exact += d == 0;
        ++stats->pixels;
        if (IsPadding(p.x, x) || IsPadding(p.y, y)) {
          ASSERT_EQ(got.px[i], p.fill[c]) << what << ": padding pixel " << x << "," << y;
        }
        ASSERT_LE(d, 1) << what << ": pixel " << x << "," << y << " channel " << c;
      }
}

std::string Describe(const AxisMap& m) {
  std::ostringstream os;
  os << "[" << m.in_lo << "," << m.in_hi << ") origin " << m.origin << " scale " << m.scale
     << " len " << m.resized_len << " off " << m.out_off << " out " << m.out_len
     << (m.flip ? " flip" : "") << (m.identity ? " identity" : "");
  return os.str();
}

// Random maps on both axes (a quarter identity, half of them padded), either filter, antialias
// mostly on, a random fill.
ResizeParams RandomParams(std::mt19937& g, int w, int h) {
  ResizeParams p;
  const bool pad = g() % 2 == 0;
  p.x = RandomMap(g, w, g() % 4 == 0 ? MapKind::kIdentity : MapKind::kResize, pad);
  p.y = RandomMap(g, h, g() % 4 == 0 ? MapKind::kIdentity : MapKind::kResize, pad);
  p.filter = g() % 2 == 0 ? Filter::kBilinear : Filter::kBicubic;
  p.antialias = g() % 4 != 0;
  for (auto& f : p.fill) f = static_cast<uint8_t>(g());
  return p;
}

// Bound: at most 1 level apart (22-bit fixed-point weights and integer accumulation against
// double precision; a sum within 2^-22 of a .5 boundary rounds either way), and at least 99% of
// the values equal.
TEST(ResizeTest, CpuMatchesReferenceOnRandomMaps) {
  std::mt19937 g(2024);
  DiffStats stats;
  for (int iter = 0; iter < 1500; ++iter) {
    const int w = RandInt(g, 1, 40), h = RandInt(g, 1, 40);
    const Image in = RandomImage(g, w, h);
    const ResizeParams p = RandomParams(g, w, h);
    std::ostringstream what;
    what << "iteration " << iter << " x " << Describe(p.x) << " y " << Describe(p.y);
    CompareWithRef(p, in, &stats, what.str());
    if (HasFatalFailure()) return;
  }
  EXPECT_LE(stats.max_diff, 1);
  EXPECT_GE(static_cast<double>(stats.exact), 0.99 * static_cast<double>(stats.pixels))
      << stats.exact << " of " << stats.pixels << " exact";
}

// The SIMD passes split each coefficient into 16-bit halves; the sums must equal the portable
// fixed-point ones exactly, including the last pixels of a row (portable fallback inside the
// SIMD loop), negative bicubic lobes, flips and padding. Images up to 300 px wide give windows
// of many taps.
TEST(ResizeTest, SimdEqualsPortableExactly) {
  std::mt19937 g(99);
  for (int iter = 0; iter < 600; ++iter) {
    const int w = RandInt(g, 1, iter % 3 == 0 ? 300 : 40), h = RandInt(g, 1, 40);
    const Image in = RandomImage(g, w, h);
    const ResizeParams p = RandomParams(g, w, h);
    ASSERT_EQ(RunCpu(p, in, true).px, RunCpu(p, in, false).px)
        << "iteration " << iter << " x " << Describe(p.x) << " y " << Describe(p.y);
  }
}

TEST(ResizeTest, IdentityMapsCopyPixels) {
  std::mt19937 g(7);
  const Image in = RandomImage(g, 13, 9);
  ResizeParams p;
  p.x = Identity(13);
  p.y = Identity(9);
  EXPECT_EQ(RunCpu(p, in).px, in.px);
  // An identity window: columns [3, 10), rows [2, 7).
  p.x.origin = 3;
  p.x.resized_len = p.x.out_len = 7;
  p.y.origin = 2;
  p.y.resized_len = p.y.out_len = 5;
  const Image out = RunCpu(p, in);
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 7; ++x)
      for (int c = 0; c < 3; ++c)
        ASSERT_EQ(out.px[(static_cast<size_t>(y) * 7 + x) * 3 + c],
                  in.px[(static_cast<size_t>(y + 2) * 13 + x + 3) * 3 + c]);
}

TEST(ResizeTest, FlipReversesColumnsAndRows) {
  std::mt19937 g(8);
  const Image in = RandomImage(g, 11, 6);
  for (bool identity : {true, false}) {
    ResizeParams p;
    p.x = identity ? Identity(11) : Plain(11, 5);
    p.y = identity ? Identity(6) : Plain(6, 4);
    const Image straight = RunCpu(p, in);
    p.x.flip = true;
    const Image hflip = RunCpu(p, in);
    p.x.flip = false;
    p.y.flip = true;
    const Image vflip = RunCpu(p, in);
    const int W = straight.w, H = straight.h;
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x)
        for (int c = 0; c < 3; ++c) {
          const uint8_t v = straight.px[(static_cast<size_t>(y) * W + x) * 3 + c];
          ASSERT_EQ(hflip.px[(static_cast<size_t>(y) * W + (W - 1 - x)) * 3 + c], v);
          ASSERT_EQ(vflip.px[(static_cast<size_t>(H - 1 - y) * W + x) * 3 + c], v);
        }
  }
}

TEST(ResizeTest, CropEqualsResizingTheMaterializedCrop) {
  // in_lo/in_hi select the region the resize sees: identical to cutting it out first.
  std::mt19937 g(9);
  for (int iter = 0; iter < 200; ++iter) {
    const int w = RandInt(g, 2, 30), h = RandInt(g, 2, 30);
    const Image in = RandomImage(g, w, h);
    const int x0 = RandInt(g, 0, w - 1), x1 = RandInt(g, x0 + 1, w);
    const int y0 = RandInt(g, 0, h - 1), y1 = RandInt(g, y0 + 1, h);
    Image crop{x1 - x0, y1 - y0, {}};
    for (int y = y0; y < y1; ++y)
      crop.px.insert(crop.px.end(), in.px.begin() + (static_cast<ptrdiff_t>(y) * w + x0) * 3,
                     in.px.begin() + (static_cast<ptrdiff_t>(y) * w + x1) * 3);
    ResizeParams p, q;
    const int ow = RandInt(g, 1, 25), oh = RandInt(g, 1, 25);
    p.x = Cropped(x0, x1, ow);
    p.y = Cropped(y0, y1, oh);
    q.x = Plain(x1 - x0, ow);
    q.y = Plain(y1 - y0, oh);
    p.filter = q.filter = g() % 2 ? Filter::kBicubic : Filter::kBilinear;
    ASSERT_EQ(RunCpu(p, in).px, RunCpu(q, crop).px)
        << "crop [" << x0 << "," << x1 << ")x[" << y0 << "," << y1 << ") -> " << ow << "x" << oh;
  }
}

TEST(ResizeTest, PaddingGetsTheFillValue) {
  // A 4x2 identity image shown through a 8x5 window starting 2 columns and 1 row before it.
  std::mt19937 g(10);
  const Image in = RandomImage(g, 4, 2);
  ResizeParams p;
  p.x = Identity(4);
  p.y = Identity(2);
  p.x.out_off = -2;
  p.x.out_len = 8;
  p.y.out_off = -1;
  p.y.out_len = 5;
  p.fill[0] = 7, p.fill[1] = 8, p.fill[2] = 9;
  for (bool flip : {false, true}) {
    p.x.flip = flip;
    const Image out = RunCpu(p, in);
    for (int y = 0; y < 5; ++y)
      for (int x = 0; x < 8; ++x) {
        const int sx = (flip ? 7 - x : x) - 2, sy = y - 1;
        for (int c = 0; c < 3; ++c) {
          const uint8_t want = sx >= 0 && sx < 4 && sy >= 0 && sy < 2
                                   ? in.px[(static_cast<size_t>(sy) * 4 + sx) * 3 + c]
                                   : p.fill[c];
          ASSERT_EQ(out.px[(static_cast<size_t>(y) * 8 + x) * 3 + c], want)
              << x << "," << y << (flip ? " flipped" : "");
        }
      }
  }
}

TEST(ResizeTest, ScratchIsReusedAcrossSizes) {
  // One scratch for a sequence of different shapes gives the same result as a fresh one.
  std::mt19937 g(11);
  ResizeScratch shared;
  for (int iter = 0; iter < 50; ++iter) {
    const int w = RandInt(g, 1, 50), h = RandInt(g, 1, 50);
    const Image in = RandomImage(g, w, h);
    ResizeParams p;
    p.x = RandomMap(g, w, MapKind::kResize, true);
    p.y = RandomMap(g, h, MapKind::kResize, true);
    p.filter = g() % 2 ? Filter::kBicubic : Filter::kBilinear;
    Image a = Blank(p.x.out_len, p.y.out_len);
    ResizeCpu(p, in.view(), a.mut(), &shared);
    ASSERT_EQ(a.px, RunCpu(p, in).px) << iter;
  }
}

}  // namespace
}  // namespace sluice
