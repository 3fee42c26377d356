// YUV 4:2:0 to RGB: the coefficients for a matrix (BT.601, BT.709, BT.2020) and a range
// (limited: Y 16-235, chroma 16-240; full: 0-255), and the per-pixel math shared by the CPU
// and the GPU kernels, in integers (16 fraction bits, one rounding at the end) so that both sides
// give the same bytes, within one level of the equations in double precision (yuv_ref.h). Each
// chroma sample covers its 2x2 luma pixels (no chroma interpolation, as FFmpeg's unscaled
// converters do); its terms are computed once for them (YuvChroma).
//
// Thread-safety: plain values and pure functions.
#ifndef SLUICE_KERNELS_YUV_YUV_PARAMS_H_
#define SLUICE_KERNELS_YUV_YUV_PARAMS_H_

#include <cmath>
#include <cstdint>

#include "core/hd.h"
#include "core/yuv_view.h"

namespace sluice {

// R = ((Y - y_offset) y + r_v (V - 128)) / 2^16, G = (... - g_u (U - 128) - g_v (V - 128)) / 2^16,
// B = (... + b_u (U - 128)) / 2^16, each rounded once and clamped to 0-255.
struct YuvCoeffs {
  int y_offset = 16, y = 1 << 16;
  int r_v = 0, g_u = 0, g_v = 0, b_u = 0;
};

// The coefficients of `matrix` from its luma weights Kr and Kb (host code).
inline YuvCoeffs MakeYuvCoeffs(YuvMatrix matrix, bool full_range) {
  const double kr = matrix == YuvMatrix::kBt709 ? 0.2126 : matrix == YuvMatrix::kBt2020 ? 0.2627 : 0.299;
  const double kb = matrix == YuvMatrix::kBt709 ? 0.0722 : matrix == YuvMatrix::kBt2020 ? 0.0593 : 0.114;
  const double kg = 1 - kr - kb;
  const double y_scale = full_range ? 1.0 : 255.0 / 219.0, c_scale = full_range ? 1.0 : 255.0 / 224.0;
  auto fixed = [](double v) { return static_cast<int>(std::lround(v * 65536.0)); };
  YuvCoeffs c;
  c.y_offset = full_range ? 0 : 16;
  c.y = fixed(y_scale);
  c.r_v = fixed(2 * (1 - kr) * c_scale);
  c.g_u = fixed(2 * kb * (1 - kb) / kg * c_scale);
  c.g_v = fixed(2 * kr * (1 - kr) / kg * c_scale);
  c.b_u = fixed(2 * (1 - kb) * c_scale);
  return c;
}

// What one chroma sample adds to each of its pixels' R, G and B (fixed point).
struct YuvChromaTerms {
  int r = 0, g = 0, b = 0;
};

SLUICE_HD YuvChromaTerms YuvChroma(const YuvCoeffs& c, int u, int v) {
  const int du = u - 128, dv = v - 128;
  return YuvChromaTerms{c.r_v * dv, -c.g_u * du - c.g_v * dv, c.b_u * du};
}

SLUICE_HD uint8_t YuvRound(int fixed) {
  const int v = (fixed + (1 << 15)) >> 16;  // arithmetic shift: floor, so this rounds half up
  return static_cast<uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v));
}

// One pixel: luma y with its chroma's terms to rgb[0..2].
SLUICE_HD void YuvToRgbWith(const YuvCoeffs& c, const YuvChromaTerms& t, int y, uint8_t* rgb) {
  const int yy = (y - c.y_offset) * c.y;
  rgb[0] = YuvRound(yy + t.r);
  rgb[1] = YuvRound(yy + t.g);
  rgb[2] = YuvRound(yy + t.b);
}

SLUICE_HD void YuvToRgbPixel(const YuvCoeffs& c, int y, int u, int v, uint8_t* rgb) {
  YuvToRgbWith(c, YuvChroma(c, u, v), y, rgb);
}

}  // namespace sluice

#endif  // SLUICE_KERNELS_YUV_YUV_PARAMS_H_
