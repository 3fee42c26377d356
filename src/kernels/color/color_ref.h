// Reference colour steps: torchvision.transforms.v2.functional's uint8 kernels transcribed one
// whole-image operation at a time (the luma image, its floor, its mean, the blend, HSV planes),
// in float32 with every operation rounded on its own. The kernels compute per pixel instead.
#ifndef SLUICE_KERNELS_COLOR_COLOR_REF_H_
#define SLUICE_KERNELS_COLOR_COLOR_REF_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/color/color_params.h"

namespace sluice::color_ref {

// An RGB8 image as three float planes and back (plane c at [c * n, (c + 1) * n)).
inline std::vector<float> Planes(const std::vector<uint8_t>& hwc) {
  const size_t n = hwc.size() / 3;
  std::vector<float> p(hwc.size());
  for (size_t i = 0; i < n; ++i)
    for (size_t c = 0; c < 3; ++c) p[c * n + i] = static_cast<float>(hwc[i * 3 + c]);
  return p;
}

inline uint8_t Trunc(float v) {  // .clamp_(0, 255).to(torch.uint8)
  v = std::fmin(std::fmax(v, 0.0f), 255.0f);
  return static_cast<uint8_t>(v);
}

inline std::vector<float> Luma(const std::vector<float>& p) {
  const size_t n = p.size() / 3;
  std::vector<float> l(n);
  for (size_t i = 0; i < n; ++i) {
    float v = p[i] * 0.2989f;
    const float g = p[n + i] * 0.587f;
    v = v + g;
    const float b = p[2 * n + i] * 0.114f;
    l[i] = v + b;
  }
  return l;
}

// _blend(image, other (per pixel, or one value when other.size() == 1), ratio).
inline void Blend(std::vector<uint8_t>& hwc, const std::vector<float>& other, double ratio) {
  const size_t n = hwc.size() / 3;
  const float r = static_cast<float>(ratio), a = static_cast<float>(1.0 - ratio);
  for (size_t i = 0; i < n; ++i)
    for (size_t c = 0; c < 3; ++c) {
      const float o = other.size() == 1 ? other[0] : other[i];
      const float x = static_cast<float>(hwc[i * 3 + c]) * r;
      const float y = o * a;
      hwc[i * 3 + c] = Trunc(x + y);
    }
}

inline void Brightness(std::vector<uint8_t>& hwc, double f) {
  for (uint8_t& v : hwc) v = Trunc(static_cast<float>(v) * static_cast<float>(f));
}

inline void Saturation(std::vector<uint8_t>& hwc, double f) {
  std::vector<float> l = Luma(Planes(hwc));
  for (float& v : l) v = std::floor(v);
  Blend(hwc, l, f);
}

inline void Contrast(std::vector<uint8_t>& hwc, double f) {
  std::vector<float> l = Luma(Planes(hwc));
  double sum = 0;
  for (float& v : l) sum += std::floor(v);
  Blend(hwc, {static_cast<float>(sum / static_cast<double>(l.size()))}, f);
}

inline void Grayscale(std::vector<uint8_t>& hwc) {
  const std::vector<float> l = Luma(Planes(hwc));
  for (size_t i = 0; i < l.size(); ++i) hwc[i * 3] = hwc[i * 3 + 1] = hwc[i * 3 + 2] = Trunc(l[i]);
}

inline void Hue(std::vector<uint8_t>& hwc, double shift) {
  std::vector<float> p = Planes(hwc);
  const size_t n = p.size() / 3;
  const float inv = static_cast<float>(1.0 / 255.0);
  for (float& v : p) v *= inv;
  for (size_t i = 0; i < n; ++i) {
    const float r = p[i], g = p[n + i], b = p[2 * n + i];
    const float maxc = std::fmax(r, std::fmax(g, b)), minc = std::fmin(r, std::fmin(g, b));
    const bool eqc = maxc == minc;
    const float cr = maxc - minc;
    const float s = cr / (eqc ? 1.0f : maxc);
    const float d = eqc ? 1.0f : cr;
    const float rc = (maxc - r) / d, gc = (maxc - g) / d, bc = (maxc - b) / d;
    const float m_hg = (maxc == g && maxc != r) ? 1.0f : 0.0f;
    const float m_hr = maxc == r ? 1.0f : 0.0f;
    const float m_hb = (maxc != r && maxc != g) ? 1.0f : 0.0f;
    const float hg = ((rc + 2.0f) - bc) * m_hg;
    const float hr = (bc - gc) * m_hr;
    const float hb = ((gc + 4.0f) - rc) * m_hb;
    float h = (hr + hg) + hb;
    h = std::fmod(h * static_cast<float>(1.0 / 6.0) + 1.0f, 1.0f);
    h = h + static_cast<float>(shift);
    h = h - std::floor(h);
    const float h6 = h * 6.0f;
    const float fl = std::floor(h6);
    const float f = h6 - fl;
    const int sector = ((static_cast<int>(fl) % 6) + 6) % 6;
    const float sxf = s * f, oms = 1.0f - s;
    const float q = std::fmin(std::fmax((1.0f - sxf) * maxc, 0.0f), 1.0f);
    const float t = std::fmin(std::fmax((sxf + oms) * maxc, 0.0f), 1.0f);
    const float pp = std::fmin(std::fmax(oms * maxc, 0.0f), 1.0f);
    const float vpqt[4] = {maxc, pp, q, t};
    static constexpr int kSelect[3][6] = {{0, 2, 1, 1, 3, 0}, {3, 0, 0, 2, 1, 1}, {1, 1, 3, 0, 0, 2}};
    for (int c = 0; c < 3; ++c) hwc[i * 3 + static_cast<size_t>(c)] = Trunc(vpqt[kSelect[c][sector]] * 255.999f);
  }
}

// posterize(bits): keep the top `bits` bits (factor holds the mask).
inline void Posterize(std::vector<uint8_t>& hwc, uint8_t mask) {
  for (uint8_t& v : hwc) v = static_cast<uint8_t>(v & mask);
}

// solarize(threshold): where(float(v) >= threshold, 255 - v, v).
inline void Solarize(std::vector<uint8_t>& hwc, float threshold) {
  for (uint8_t& v : hwc)
    if (static_cast<float>(v) >= threshold) v = static_cast<uint8_t>(255 - v);
}

// autocontrast: per channel, (x - min) / (float32(max - min) * float32(1 / 255)), clamped and
// truncated; a flat channel is left as it is.
inline void AutoContrast(std::vector<uint8_t>& hwc) {
  const std::vector<float> p = Planes(hwc);
  const size_t n = p.size() / 3;
  for (size_t c = 0; c < 3; ++c) {
    float mn = 255.f, mx = 0.f;
    for (size_t i = 0; i < n; ++i) mn = std::fmin(mn, p[c * n + i]), mx = std::fmax(mx, p[c * n + i]);
    float inv_scale = (mx - mn) * static_cast<float>(1.0 / 255.0);
    if (mx == mn) mn = 0.f, inv_scale = 1.f;
    for (size_t i = 0; i < n; ++i) hwc[i * 3 + c] = Trunc((p[c * n + i] - mn) / inv_scale);
  }
}

// equalize: PIL's ImageOps.equalize per channel (torchvision's uint8 kernel gives the same).
inline void Equalize(std::vector<uint8_t>& hwc) {
  const size_t n = hwc.size() / 3;
  for (size_t c = 0; c < 3; ++c) {
    std::vector<int64_t> h(256, 0);
    for (size_t i = 0; i < n; ++i) ++h[hwc[i * 3 + c]];
    std::vector<int64_t> nonzero;
    for (int64_t v : h)
      if (v != 0) nonzero.push_back(v);
    const int64_t step = (static_cast<int64_t>(n) - nonzero.back()) / 255;
    if (step == 0) continue;
    std::vector<uint8_t> lut;
    int64_t acc = step / 2;
    for (int k = 0; k < 256; ++k) {
      lut.push_back(static_cast<uint8_t>(std::min<int64_t>(acc / step, 255)));
      acc += h[static_cast<size_t>(k)];
    }
    for (size_t i = 0; i < n; ++i) hwc[i * 3 + c] = lut[hwc[i * 3 + c]];
  }
}

// Runs `ops` (the factors as drawn) on an RGB8 image.
// image[permutation] on the channel axis, the six permutations written out (not PermutationOrder's arithmetic).
inline void Permute(std::vector<uint8_t>& hwc, int k) {
  const int orders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  const std::vector<uint8_t> in = hwc;
  for (size_t i = 0; i < hwc.size(); i += 3)
    for (int c = 0; c < 3; ++c) hwc[i + c] = in[i + orders[k][c]];
}

inline void Apply(const ColorOps& ops, std::vector<uint8_t>& hwc) {
  for (int i = 0; i < ops.num_steps; ++i) {
    const ColorStep& s = ops.steps[i];
    switch (s.kind) {
      case ColorKind::kBrightness: Brightness(hwc, s.factor); break;
      case ColorKind::kContrast: Contrast(hwc, s.factor); break;
      case ColorKind::kSaturation: Saturation(hwc, s.factor); break;
      case ColorKind::kHue: Hue(hwc, s.factor); break;
      case ColorKind::kGrayscale: Grayscale(hwc); break;
      case ColorKind::kPosterize: Posterize(hwc, static_cast<uint8_t>(s.factor)); break;
      case ColorKind::kSolarize: Solarize(hwc, s.factor); break;
      case ColorKind::kAutoContrast: AutoContrast(hwc); break;
      case ColorKind::kEqualize: Equalize(hwc); break;
      case ColorKind::kPermute: Permute(hwc, static_cast<int>(s.factor)); break;
    }
  }
}

}  // namespace sluice::color_ref

#endif  // SLUICE_KERNELS_COLOR_COLOR_REF_H_
