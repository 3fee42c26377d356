// Parameters and per-pixel math of the affine warp (RandomRotation, RandomAffine), shared by the
// CPU and GPU kernels: torchvision.transforms.v2.functional's rotate/affine on uint8 images.
// torchvision builds a sampling grid from the inverse affine matrix on centred pixel coordinates
// and samples with grid_sample(align_corners=False); unnormalized, output pixel (j, i) reads
// source point
//   sx = m0 * (j - ox) + m1 * (i - oy) + m2 + cx,  sy = m3 * (j - ox) + m4 * (i - oy) + m5 + cy
// with (cx, cy) = ((w - 1) / 2, (h - 1) / 2) for the w x h source and (ox, oy) the same for the
// warped image, which is the source's size, or larger with rotate's expand=True. Nearest takes the pixel at the rounded point
// (halves to even); bilinear blends the four neighbours that lie inside the image and then, as
// torchvision does with its fill mask, computes (v - fill) * m + fill, m being the weight of
// the neighbours inside. Results round half to even. The math is in double, with each product
// and sum rounded on its own (no fused multiply-add), so the CPU and the GPU agree bit for bit;
// torchvision computes the grid in float32, so a point within ~1e-5 of a rounding boundary may
// land on the neighbouring pixel there.
//
// The crops and flips that follow the warp in a transform list ride along as a window on the
// warped image (WarpAxis), as in the resize's AxisMap.
//
// Thread-safety: plain values and pure functions.
#ifndef SLUICE_KERNELS_WARP_WARP_PARAMS_H_
#define SLUICE_KERNELS_WARP_WARP_PARAMS_H_

#include <cmath>
#include <cstdint>

#include "core/hd.h"

namespace sluice {

enum class WarpFilter : uint8_t { kNearest, kBilinear };

// Output pixel k of one axis shows warped pixel off + k (off + len - 1 - k when flipped);
// warped pixels outside [0, warped length) are padding.
struct WarpAxis {
  int off = 0, len = 0;
  bool flip = false;
  SLUICE_HD int Index(int k) const { return off + (flip ? len - 1 - k : k); }
};

struct WarpParams {
  bool enabled = false;
  WarpFilter filter = WarpFilter::kNearest;
  int src_w = 0, src_h = 0;  // the image the warp reads
  // The buffer the warp fetches from holds that image's pixels from (src_x0, src_y0) on: a window
  // around every pixel it reads (warp_window.h), or the whole image (0, 0).
  int src_x0 = 0, src_y0 = 0;
  int out_w = 0, out_h = 0;  // the warped image: src_w x src_h, or expand=True's bounding box
  double m[6] = {1.0, 0.0, 0.0, 0.0, 1.0, 0.0};  // torchvision's inverse matrix (centred)
  uint8_t fill[3] = {0, 0, 0};      // points outside the source image
  WarpAxis x, y;                    // the window shown
  uint8_t pad_fill[3] = {0, 0, 0};  // window pixels outside the warped image
  // Compute the source point as torchvision's float32 grid does (FloatGridPoint), not in double:
  // bit-exact with torchvision for nearest, ties included (the auto-augment warps use it).
  bool float_grid = false;
  // Blend bilinear samples with `fill` through the mask (torchvision with a fill); false: the
  // zero-padded blend as it is (torchvision's fill=None, which the auto-augments default to).
  bool mask_fill = true;
  // A perspective warp instead (RandomPerspective): torchvision's 8 coefficients c, as float32,
  // output pixel (j, i) reading ((c0 x + c1 y + c2) / (c6 x + c7 y + 1) - 1/2, (c3 x + c4 y + c5) /
  // (c6 x + c7 y + 1) - 1/2) at its centre (x, y) = (j + 1/2, i + 1/2): PerspectivePoint.
  bool perspective = false;
  float c[8] = {1.f, 0.f, 0.f, 0.f, 1.f, 0.f, 0.f, 0.f};
};

namespace warp {

// Round half to even (torch.round and nearbyint in the default rounding mode).
SLUICE_HD double RoundEven(double v) {
#if defined(__CUDA_ARCH__)
  return rint(v);
#else
  return std::nearbyint(v);
#endif
}

SLUICE_HD uint8_t ToU8(double v) {
  const double r = RoundEven(v);
  return static_cast<uint8_t>(r < 0.0 ? 0.0 : (r > 255.0 ? 255.0 : r));
}

}  // namespace warp

// The source point warped pixel (j, i) reads.
SLUICE_HD void WarpSourcePoint(const WarpParams& p, int j, int i, double* sx, double* sy) {
  const double cx = 0.5 * (p.src_w - 1), cy = 0.5 * (p.src_h - 1);
  const double xb = j - 0.5 * (p.out_w - 1), yb = i - 0.5 * (p.out_h - 1);  // exact
  using hd::Add;
  using hd::Mul;
  *sx = Add(Add(Add(Mul(p.m[0], xb), Mul(p.m[1], yb)), p.m[2]), cx);
  *sy = Add(Add(Add(Mul(p.m[3], xb), Mul(p.m[4], yb)), p.m[5]), cy);
}

// The source point as torchvision's _apply_grid_transform computes it: the matrix in float32,
// each row divided by half the image's size, the centred grid times it (plain float32 products
// and sums), then grid_sample's unnormalization (g + 1) * size / 2 - 1 / 2 as a fused
// multiply-add.
SLUICE_HD void FloatGridPoint(const WarpParams& p, int j, int i, double* sx, double* sy) {
  using hd::Add;
  using hd::Mul;
  const float hw = 0.5f * static_cast<float>(p.src_w), hh = 0.5f * static_cast<float>(p.src_h);
  float r[6];
  for (int k = 0; k < 6; ++k) r[k] = static_cast<float>(p.m[k]) / (k < 3 ? hw : hh);
  const float xc = static_cast<float>(j) - 0.5f * static_cast<float>(p.out_w - 1);
  const float yc = static_cast<float>(i) - 0.5f * static_cast<float>(p.out_h - 1);
  const float gx = Add(Add(Mul(xc, r[0]), Mul(yc, r[1])), r[2]);
  const float gy = Add(Add(Mul(xc, r[3]), Mul(yc, r[4])), r[5]);
#if defined(__CUDA_ARCH__)
  *sx = fmaf(Add(gx, 1.0f), hw, -0.5f);
  *sy = fmaf(Add(gy, 1.0f), hh, -0.5f);
#else
  *sx = std::fmaf(Add(gx, 1.0f), hw, -0.5f);
  *sy = std::fmaf(Add(gy, 1.0f), hh, -0.5f);
#endif
}

// The source point of a perspective warp as torchvision's _perspective_grid computes it in
// float32 (the first row scaled by 1 / (w / 2), the centred pixel times it, divided by the
// denominator, less 1), then grid_sample's unnormalization, as FloatGridPoint's.
SLUICE_HD void PerspectivePoint(const WarpParams& p, int j, int i, double* sx, double* sy) {
  using hd::Add;
  using hd::Mul;
  const float hw = 0.5f * static_cast<float>(p.src_w), hh = 0.5f * static_cast<float>(p.src_h);
  const float x = Add(static_cast<float>(j), 0.5f), y = Add(static_cast<float>(i), 0.5f);
  const float nx = Add(Add(Mul(x, p.c[0] / hw), Mul(y, p.c[1] / hw)), p.c[2] / hw);
  const float ny = Add(Add(Mul(x, p.c[3] / hh), Mul(y, p.c[4] / hh)), p.c[5] / hh);
  const float d = Add(Add(Mul(x, p.c[6]), Mul(y, p.c[7])), 1.0f);
  const float gx = nx / d - 1.0f, gy = ny / d - 1.0f;
#if defined(__CUDA_ARCH__)
  *sx = fmaf(Add(gx, 1.0f), hw, -0.5f);
  *sy = fmaf(Add(gy, 1.0f), hh, -0.5f);
#else
  *sx = std::fmaf(Add(gx, 1.0f), hw, -0.5f);
  *sy = std::fmaf(Add(gy, 1.0f), hh, -0.5f);
#endif
}

template <typename Fetch>
SLUICE_HD void SamplePoint(const WarpParams& p, double sx, double sy, const Fetch& fetch, uint8_t out[3]);

// Output pixel (k, l) of the window into out[3]. fetch(x, y, rgb) reads pixel (x, y) of the
// buffer, source pixel (src_x0 + x, src_y0 + y), 0 <= src_x0 + x < src_w, 0 <= src_y0 + y < src_h.
template <typename Fetch>
SLUICE_HD void WarpPixel(const WarpParams& p, int k, int l, const Fetch& fetch, uint8_t out[3]) {
  const int j = p.x.Index(k), i = p.y.Index(l);
  if (j < 0 || j >= p.out_w || i < 0 || i >= p.out_h) {
    out[0] = p.pad_fill[0], out[1] = p.pad_fill[1], out[2] = p.pad_fill[2];
    return;
  }
  double sx, sy;
  if (p.perspective) {
    PerspectivePoint(p, j, i, &sx, &sy);
  } else if (p.float_grid) {
    FloatGridPoint(p, j, i, &sx, &sy);
  } else {
    WarpSourcePoint(p, j, i, &sx, &sy);
  }
  SamplePoint(p, sx, sy, fetch, out);
}

// grid_sample at source point (sx, sy) of the p.src_w x p.src_h source with p's filter and
// fill: the pixel at the rounded point, or the bilinear blend with the fill mask (fetched from
// the buffer that starts at (p.src_x0, p.src_y0)).
template <typename Fetch>
SLUICE_HD void SamplePoint(const WarpParams& p, double sx, double sy, const Fetch& fetch, uint8_t out[3]) {
  if (p.filter == WarpFilter::kNearest) {
    const double rx = warp::RoundEven(sx), ry = warp::RoundEven(sy);
    if (rx >= 0.0 && rx < p.src_w && ry >= 0.0 && ry < p.src_h) {
      fetch(static_cast<int>(rx) - p.src_x0, static_cast<int>(ry) - p.src_y0, out);
    } else {
      out[0] = p.fill[0], out[1] = p.fill[1], out[2] = p.fill[2];
    }
    return;
  }
  using hd::Add;
  using hd::Mul;
  // Bilinear, in grid_sample's order: north-west, north-east, south-west, south-east.
  const double fx = std::floor(sx), fy = std::floor(sy);
  const double wx[2] = {Add(Add(fx, 1.0), -sx), Add(sx, -fx)};
  const double wy[2] = {Add(Add(fy, 1.0), -sy), Add(sy, -fy)};
  double v[3] = {0.0, 0.0, 0.0}, mask = 0.0;
  for (int c = 0; c < 4; ++c) {
    const int dx = c & 1, dy = c >> 1;
    if (fx + dx < 0.0 || fx + dx >= p.src_w || fy + dy < 0.0 || fy + dy >= p.src_h) continue;
    const double w = Mul(wx[dx], wy[dy]);
    uint8_t px[3];
    fetch(static_cast<int>(fx) + dx - p.src_x0, static_cast<int>(fy) + dy - p.src_y0, px);
    for (int ch = 0; ch < 3; ++ch) v[ch] = Add(v[ch], Mul(static_cast<double>(px[ch]), w));
    mask = Add(mask, w);
  }
  for (int ch = 0; ch < 3; ++ch) {
    const double f = p.fill[ch];
    out[ch] = warp::ToU8(p.mask_fill ? Add(Mul(Add(v[ch], -f), mask), f) : v[ch]);
  }
}

}  // namespace sluice

#endif  // SLUICE_KERNELS_WARP_WARP_PARAMS_H_
