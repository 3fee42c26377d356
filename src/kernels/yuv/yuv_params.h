// YUV 4:2:0 to RGB: the coefficients for a matrix (BT.601, BT.709, BT.2020) and a range
// (limited: Y 16-235, chroma 16-240; full: 0-255), and the per-pixel math shared by the CPU
// and the GPU kernels. Each chroma sample covers its 2x2 luma pixels (no chroma interpolation,
// as FFmpeg's unscaled converters do). Products and sums are rounded one by one (hd::Mul, hd::Add)
// so that both sides give the same bytes.
//
// Thread-safety: plain values and pure functions.
#ifndef SLUICE_KERNELS_YUV_YUV_PARAMS_H_
#define SLUICE_KERNELS_YUV_YUV_PARAMS_H_

#include <cstdint>

#include "core/hd.h"
#include "core/yuv_view.h"

namespace sluice {

struct YuvCoeffs {
  float y_offset = 16, y_scale = 1, c_scale = 1;  // Y' = (Y - y_offset) y_scale; Pb = (U - 128) c_scale
  float r_v = 0, g_u = 0, g_v = 0, b_u = 0;      // R = Y' + r_v Pr, G = Y' - g_u Pb - g_v Pr, B = Y' + b_u Pb
};

// The coefficients of `matrix` from its luma weights Kr and Kb (host code).
inline YuvCoeffs MakeYuvCoeffs(YuvMatrix matrix, bool full_range) {
  const double kr = matrix == YuvMatrix::kBt709 ? 0.2126 : matrix == YuvMatrix::kBt2020 ? 0.2627 : 0.299;
  const double kb = matrix == YuvMatrix::kBt709 ? 0.0722 : matrix == YuvMatrix::kBt2020 ? 0.0593 : 0.114;
  const double kg = 1 - kr - kb;
  YuvCoeffs c;
  c.y_offset = full_range ? 0.0f : 16.0f;
  c.y_scale = static_cast<float>(full_range ? 1.0 : 255.0 / 219.0);
  c.c_scale = static_cast<float>(full_range ? 1.0 : 255.0 / 224.0);
  c.r_v = static_cast<float>(2 * (1 - kr));
  c.g_u = static_cast<float>(2 * kb * (1 - kb) / kg);
  c.g_v = static_cast<float>(2 * kr * (1 - kr) / kg);
  c.b_u = static_cast<float>(2 * (1 - kb));
  return c;
}

SLUICE_HD uint8_t YuvClampRound(float v) {
  v = v < 0.0f ? 0.0f : (v > 255.0f ? 255.0f : v);
  return static_cast<uint8_t>(static_cast<int>(hd::Add(v, 0.5f)));
}

// One pixel: luma y and its chroma u, v to rgb[0..2].
SLUICE_HD void YuvToRgbPixel(const YuvCoeffs& c, int y, int u, int v, uint8_t* rgb) {
  using hd::Add;
  using hd::Mul;
  const float yy = Mul(static_cast<float>(y) - c.y_offset, c.y_scale);
  const float pb = Mul(static_cast<float>(u - 128), c.c_scale);
  const float pr = Mul(static_cast<float>(v - 128), c.c_scale);
  rgb[0] = YuvClampRound(Add(yy, Mul(c.r_v, pr)));
  rgb[1] = YuvClampRound(Add(Add(yy, -Mul(c.g_u, pb)), -Mul(c.g_v, pr)));
  rgb[2] = YuvClampRound(Add(yy, Mul(c.b_u, pb)));
}

}  // namespace sluice

#endif  // SLUICE_KERNELS_YUV_YUV_PARAMS_H_
