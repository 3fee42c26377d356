// Parameters and per-pixel math of the resize kernel, shared by the reference, the CPU and the
// GPU versions.
//
// The algorithm is PIL's (and torchvision's antialiased resize): a separable filter whose support
// widens with the downscale factor, horizontal pass first, rounding to 8 bits between the passes
// and at the end. kNearest is torch's interpolate(mode="nearest") instead: resized pixel r shows
// input pixel min(floor(r * float32(in / out)), in - 1), one tap of weight 1. Crops, flips and constant padding ride along in the per-axis mapping, so a
// "crop then resize then crop then flip" chain is one pass.
#ifndef SLUICE_KERNELS_RESIZE_RESIZE_PARAMS_H_
#define SLUICE_KERNELS_RESIZE_RESIZE_PARAMS_H_

#include <cmath>
#include <cstdint>

#include "core/hd.h"

namespace sluice {

enum class Filter : uint8_t { kBilinear, kBicubic, kNearest };

// What resized pixels outside [0, resized_len) show: the segment's fill (kConstant), the nearest
// edge pixel (kEdge), the image mirrored without repeating the edge (kReflect: ... c b | a b c d
// | c b ...) or repeating it (kSymmetric: ... b a | a b c d | d c ...), as torchvision's
// padding modes; mirrored again past the far edge.
enum class PadMode : uint8_t { kConstant, kEdge, kReflect, kSymmetric };

// The resized pixel that padded position r (of n) shows (r itself inside, or for kConstant).
SLUICE_HD int PaddedIndex(int r, int n, PadMode mode) {
  if ((r >= 0 && r < n) || mode == PadMode::kConstant) return r;
  if (mode == PadMode::kEdge || n == 1) return r < 0 ? 0 : n - 1;
  const int period = mode == PadMode::kReflect ? 2 * (n - 1) : 2 * n;
  int q = r % period;
  if (q < 0) q += period;
  if (q < n) return q;
  return mode == PadMode::kReflect ? period - q : period - 1 - q;
}

// How output pixels of one axis map onto the input buffer.
//
// Resized pixel i (0 <= i < resized_len) is centred at input coordinate
// origin + (i + 0.5) * scale and reads input pixels in [in_lo, in_hi) only (the region the
// resize sees: taps outside it are dropped and the rest renormalized, as when PIL resizes a
// cropped image). Output pixel k shows resized pixel r = out_off + k, or out_off + out_len-1-k
// when flipped; r outside [0, resized_len) is padding and gets the fill value.
struct AxisMap {
  int in_lo = 0, in_hi = 0;
  double origin = 0.0;
  double scale = 1.0;
  int resized_len = 0;
  int out_off = 0;
  int out_len = 0;
  bool flip = false;
  // scale == 1 and origin an integer: resized pixel i is input pixel origin + i (no filtering).
  bool identity = false;
  PadMode pad = PadMode::kConstant;

  // The resized pixel output pixel k shows (outside [0, resized_len): padding, the fill).
  SLUICE_HD int ResizedIndex(int k) const {
    return PaddedIndex(out_off + (flip ? out_len - 1 - k : k), resized_len, pad);
  }
};

struct ResizeParams {
  AxisMap x, y;
  Filter filter = Filter::kBilinear;
  bool antialias = true;  // false: the filter keeps its support when downscaling
  uint8_t fill[3] = {0, 0, 0};
};

SLUICE_HD double FilterSupport(Filter f) { return f == Filter::kBilinear ? 1.0 : 2.0; }

SLUICE_HD double FilterWeight(Filter f, double x) {
  if (x < 0.0) x = -x;
  if (f == Filter::kBilinear) return x < 1.0 ? 1.0 - x : 0.0;
  constexpr double a = -0.5;  // PIL's and torchvision's bicubic
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
  if (x < 2.0) return (((x - 5.0) * x + 8.0) * x - 4.0) * a;
  return 0.0;
}

// PIL's fixed-point arithmetic: 22-bit coefficients, sums started at one half and taken modulo
// 2^32 (the same values PIL's int arithmetic and SIMD lanes produce), then clipped to 8 bits.
inline constexpr int kResizePrecisionBits = 32 - 8 - 2;
inline constexpr int32_t kResizeHalf = 1 << (kResizePrecisionBits - 1);

SLUICE_HD uint32_t ResizeMul(uint8_t pixel, int32_t coef) {
  return static_cast<uint32_t>(pixel) * static_cast<uint32_t>(coef);
}

SLUICE_HD uint8_t ResizeClip8(uint32_t sum) {
  const int32_t v = static_cast<int32_t>(sum) >> kResizePrecisionBits;
  return static_cast<uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v));
}

// Largest number of taps any output pixel of this axis can have.
SLUICE_HD int MaxTaps(const AxisMap& m, Filter f, bool antialias) {
  if (m.identity || f == Filter::kNearest) return 1;
  const double filterscale = antialias && m.scale > 1.0 ? m.scale : 1.0;
  return static_cast<int>(std::ceil(FilterSupport(f) * filterscale)) * 2 + 1;
}

struct TapWindow {
  int first = 0;  // input index of the first tap
  int count = 0;  // 0: padding (fill)
};

// torch's nearest source index of resized pixel r: floor(r * scale) with the scale in float32
// (in / out of the resize's integer lengths), at most the last input pixel; relative to origin.
SLUICE_HD int NearestSource(const AxisMap& m, int r) {
  const int in_len = static_cast<int>(m.scale * m.resized_len + 0.5);
  const float scale = static_cast<float>(in_len) / static_cast<float>(m.resized_len);
  const int src = static_cast<int>(floorf(static_cast<float>(r) * scale));
  return src < in_len - 1 ? src : in_len - 1;
}

// Taps of resized pixel `r`: the input window and, if `weights` is not null, the normalized
// weights (weights[0..count)). Mirrors PIL's precompute_coeffs, computed relative to in_lo so
// that a crop-then-resize gives PIL's exact weights.
SLUICE_HD TapWindow ComputeTaps(const AxisMap& m, Filter f, bool antialias, int r,
                                double* weights) {
  TapWindow w;
  if (r < 0 || r >= m.resized_len) return w;
  if (m.identity) {
    w.first = static_cast<int>(m.origin) + r;
    w.count = 1;
    if (weights != nullptr) weights[0] = 1.0;
    return w;
  }
  if (f == Filter::kNearest) {
    int first = static_cast<int>(floor(m.origin + 0.5)) + NearestSource(m, r);
    first = first < m.in_lo ? m.in_lo : (first >= m.in_hi ? m.in_hi - 1 : first);
    w.first = first;
    w.count = 1;
    if (weights != nullptr) weights[0] = 1.0;
    return w;
  }
  const double filterscale = antialias && m.scale > 1.0 ? m.scale : 1.0;
  const double support = FilterSupport(f) * filterscale;
  const double ss = 1.0 / filterscale;
  const double center = (m.origin - m.in_lo) + (r + 0.5) * m.scale;  // relative to in_lo
  const int len = m.in_hi - m.in_lo;
  int xmin = static_cast<int>(center - support + 0.5);
  if (xmin < 0) xmin = 0;
  int xmax = static_cast<int>(center + support + 0.5);
  if (xmax > len) xmax = len;
  xmax -= xmin;
  if (xmax <= 0) {  // a centre outside the region (only with padding-like maps): nearest edge
    xmin = center < 0 ? 0 : len - 1;
    xmax = 1;
    if (weights != nullptr) weights[0] = 1.0;
    w.first = m.in_lo + xmin;
    w.count = 1;
    return w;
  }
  if (weights != nullptr) {
    double total = 0.0;
    for (int x = 0; x < xmax; ++x) {
      const double v = FilterWeight(f, (x + xmin - center + 0.5) * ss);
      weights[x] = v;
      total += v;
    }
    if (total != 0.0)
      for (int x = 0; x < xmax; ++x) weights[x] /= total;
  }
  w.first = m.in_lo + xmin;
  w.count = xmax;
  return w;
}

// The input span [*lo, *hi) that output pixels of this axis read (empty if all are padding).
SLUICE_HD void InputSpan(const AxisMap& m, Filter f, bool antialias, int* lo, int* hi) {
  int r0 = m.out_off, r1 = m.out_off + m.out_len - 1;  // resized indices shown
  if (r0 < 0) r0 = 0;
  if (r1 > m.resized_len - 1) r1 = m.resized_len - 1;
  if (r0 > r1) {
    *lo = *hi = 0;
    return;
  }
  const TapWindow a = ComputeTaps(m, f, antialias, r0, nullptr);
  const TapWindow b = ComputeTaps(m, f, antialias, r1, nullptr);
  *lo = a.first;
  *hi = b.first + b.count;
}

}  // namespace sluice

#endif  // SLUICE_KERNELS_RESIZE_RESIZE_PARAMS_H_
