// Per-sample colour steps (ColorJitter's four adjustments, grayscale) and their per-pixel math,
// shared by the CPU and the GPU kernels: torchvision.transforms.v2.functional's formulas on
// uint8 images, in float32 with each product and sum rounded on its own (no fused
// multiply-add on either side, so the CPU and the GPU give the same bytes).
//
// A list of steps runs in order on an RGB8 image. Some steps need a statistic of the whole image
// as the earlier steps left it (contrast: the mean of its luma; autocontrast: each channel's
// minimum and maximum; equalize: each channel's histogram, made into a lookup table). The
// kernels find those first, one pass over the image per such step (ColorStats), and then run
// every step on each pixel. RandAugment's posterize, solarize, autocontrast and equalize follow
// torchvision's uint8 kernels: a bit mask; 255 - v where float(v) >= the float32 threshold;
// trunc((v - min) / (float32(max - min) * float32(1 / 255))); PIL's equalize lookup table.
//
// Thread-safety: plain values and pure functions.
#ifndef SLUICE_KERNELS_COLOR_COLOR_PARAMS_H_
#define SLUICE_KERNELS_COLOR_COLOR_PARAMS_H_

#include <cmath>
#include <cstdint>

#include "core/hd.h"

namespace sluice {

enum class ColorKind : uint8_t {
  kBrightness, kContrast, kSaturation, kHue, kGrayscale, kPosterize, kSolarize, kAutoContrast, kEqualize,
  kPermute
};

// "brightness", "contrast", ..., "equalize" (host code).
inline const char* ColorKindName(ColorKind k) {
  static const char* const kNames[] = {"brightness", "contrast", "saturation", "hue", "grayscale",
                                       "posterize", "solarize", "autocontrast", "equalize", "permute"};
  return kNames[static_cast<int>(k)];
}

struct ColorStep {
  ColorKind kind = ColorKind::kBrightness;
  // brightness/contrast/saturation factor, the hue shift, posterize's bit mask (0-255),
  // solarize's float32 threshold, or permute's permutation (k of PermutationOrder)
  float factor = 1.0f;
  float alpha = 0.0f;   // 1 - factor, computed in double as torchvision's _blend does, then float
};

// A step with torchvision's factor (float32) and _blend's 1 - ratio (in double, then float).
SLUICE_HD ColorStep MakeColorStep(ColorKind kind, double factor) {
  return ColorStep{kind, static_cast<float>(factor), static_cast<float>(1.0 - factor)};
}

struct ColorOps {
  static constexpr int kMaxSteps = 8;
  ColorStep steps[kMaxSteps];
  int num_steps = 0;
  int num_stats = 0;  // steps among them that need a statistic of the image
};

// Whether a step needs a statistic of the whole image.
SLUICE_HD bool NeedsStats(ColorKind k) {
  return k == ColorKind::kContrast || k == ColorKind::kAutoContrast || k == ColorKind::kEqualize;
}

// The statistics of a list's steps, indexed by step.
struct ColorStats {
  float mean[ColorOps::kMaxSteps];          // contrast: the luma mean
  float lo[ColorOps::kMaxSteps][3];         // autocontrast: the channel minimum (0 when flat)
  float inv_scale[ColorOps::kMaxSteps][3];  // autocontrast: float32(max - min) / 255 (1 when flat)
  uint8_t lut[ColorOps::kMaxSteps][3][256];  // equalize: the channel lookup table
};

namespace color {

using hd::Add;
using hd::Mul;

SLUICE_HD float Clamp(float v, float lo, float hi) { return v < lo ? lo : (v > hi ? hi : v); }

// float -> uint8 as torch's .to(torch.uint8) does for values in [0, 255]: truncation.
SLUICE_HD uint8_t ToU8(float v) { return static_cast<uint8_t>(Clamp(v, 0.0f, 255.0f)); }

// r * 0.2989 + g * 0.587 + b * 0.114, in that order (rgb_to_grayscale).
SLUICE_HD float Luma(float r, float g, float b) {
  return Add(Add(Mul(r, 0.2989f), Mul(g, 0.587f)), Mul(b, 0.114f));
}

// Luma as contrast and saturation use it on uint8 images: floored.
SLUICE_HD float LumaFloor(const uint8_t* px) {
  return static_cast<float>(static_cast<int>(Luma(px[0], px[1], px[2])));
}

// _blend(image, other, ratio) on one value.
SLUICE_HD uint8_t Blend(uint8_t v, float other, const ColorStep& s) {
  return ToU8(Add(Mul(static_cast<float>(v), s.factor), Mul(other, s.alpha)));
}

// adjust_hue on one pixel (RGB -> HSV, shift, back), float32 as torchvision computes it.
SLUICE_HD void Hue(uint8_t* px, float shift) {
  const float inv255 = 1.0f / 255.0f;
  const float r = Mul(px[0], inv255), g = Mul(px[1], inv255), b = Mul(px[2], inv255);
  const float maxc = r > g ? (r > b ? r : b) : (g > b ? g : b);
  const float minc = r < g ? (r < b ? r : b) : (g < b ? g : b);
  const bool eqc = maxc == minc;
  const float range = maxc - minc;
  const float s = range / (eqc ? 1.0f : maxc);
  const float div = eqc ? 1.0f : range;
  const float rc = (maxc - r) / div, gc = (maxc - g) / div, bc = (maxc - b) / div;
  const bool max_r = maxc == r, max_g = maxc == g;
  const float hr = max_r ? bc - gc : 0.0f;
  const float hg = (max_g && !max_r) ? Add(rc, 2.0f) - bc : 0.0f;
  const float hb = (!max_r && !max_g) ? Add(gc, 4.0f) - rc : 0.0f;
  float h = Add(Add(hr, hg), hb);
  h = Add(Mul(h, 1.0f / 6.0f), 1.0f);
  h = h - static_cast<float>(static_cast<int>(h));  // fmod(h, 1) for h >= 0
  h = Add(h, shift);
  h = h - floorf(h);  // remainder(h, 1)
  // HSV -> RGB
  const float h6 = Mul(h, 6.0f);
  const float fi = floorf(h6);
  const float f = h6 - fi;
  int i = static_cast<int>(fi) % 6;
  if (i < 0) i += 6;
  const float v = maxc;
  const float sxf = Mul(s, f);
  const float one_minus_s = 1.0f - s;
  const float q = Clamp(Mul(1.0f - sxf, v), 0.0f, 1.0f);
  const float t = Clamp(Mul(Add(sxf, one_minus_s), v), 0.0f, 1.0f);
  const float p = Clamp(Mul(one_minus_s, v), 0.0f, 1.0f);
  float o[3];
  switch (i) {
    case 0: o[0] = v, o[1] = t, o[2] = p; break;
    case 1: o[0] = q, o[1] = v, o[2] = p; break;
    case 2: o[0] = p, o[1] = v, o[2] = t; break;
    case 3: o[0] = p, o[1] = q, o[2] = v; break;
    case 4: o[0] = t, o[1] = p, o[2] = v; break;
    default: o[0] = v, o[1] = p, o[2] = q; break;
  }
  // to_dtype(float -> uint8, scale=True): x * (255 + 1 - 0.001), truncated.
  for (int c = 0; c < 3; ++c) px[c] = ToU8(Mul(o[c], 255.999f));
}

// Permutation k of the six orders of three channels, in lexicographic order (0: 012, 1: 021,
// 2: 102, 3: 120, 4: 201, 5: 210): output channel c is input channel order[c], as
// torchvision's permute_channels(image, order).
SLUICE_HD void PermutationOrder(int k, int order[3]) {
  k = k < 0 || k > 5 ? 0 : k;
  const int first = k / 2;
  const int lo = first == 0 ? 1 : 0, hi = first == 2 ? 1 : 2;  // the other two, ascending
  order[0] = first;
  order[1] = k % 2 ? hi : lo;
  order[2] = k % 2 ? lo : hi;
}

// One step (index i of its list) on one pixel.
SLUICE_HD void ApplyStep(const ColorStep& s, const ColorStats& st, int i, uint8_t* px) {
  switch (s.kind) {
    case ColorKind::kBrightness:
      for (int c = 0; c < 3; ++c) px[c] = ToU8(Mul(static_cast<float>(px[c]), s.factor));
      break;
    case ColorKind::kContrast:
      for (int c = 0; c < 3; ++c) px[c] = Blend(px[c], st.mean[i], s);
      break;
    case ColorKind::kSaturation: {
      const float l = LumaFloor(px);
      for (int c = 0; c < 3; ++c) px[c] = Blend(px[c], l, s);
      break;
    }
    case ColorKind::kHue:
      Hue(px, s.factor);
      break;
    case ColorKind::kGrayscale: {
      const uint8_t l = ToU8(Luma(px[0], px[1], px[2]));
      px[0] = px[1] = px[2] = l;
      break;
    }
    case ColorKind::kPosterize: {
      const uint8_t mask = static_cast<uint8_t>(s.factor);
      for (int c = 0; c < 3; ++c) px[c] = static_cast<uint8_t>(px[c] & mask);
      break;
    }
    case ColorKind::kSolarize:
      for (int c = 0; c < 3; ++c)
        if (static_cast<float>(px[c]) >= s.factor) px[c] = static_cast<uint8_t>(255 - px[c]);
      break;
    case ColorKind::kAutoContrast:
      for (int c = 0; c < 3; ++c) px[c] = ToU8((static_cast<float>(px[c]) - st.lo[i][c]) / st.inv_scale[i][c]);
      break;
    case ColorKind::kEqualize:
      for (int c = 0; c < 3; ++c) px[c] = st.lut[i][c][px[c]];
      break;
    case ColorKind::kPermute: {
      int order[3];
      PermutationOrder(static_cast<int>(s.factor), order);
      const uint8_t in[3] = {px[0], px[1], px[2]};
      for (int c = 0; c < 3; ++c) px[c] = in[order[c]];
      break;
    }
  }
}

// Runs steps [0, end) on one pixel.
SLUICE_HD void ApplySteps(const ColorOps& ops, int end, const ColorStats& st, uint8_t* px) {
  for (int i = 0; i < end; ++i) ApplyStep(ops.steps[i], st, i, px);
}

// Autocontrast's statistics for one channel from its minimum and maximum.
SLUICE_HD void AutoContrastStats(int mn, int mx, float* lo, float* inv_scale) {
  if (mn == mx) {
    *lo = 0.0f, *inv_scale = 1.0f;
  } else {
    *lo = static_cast<float>(mn);
    *inv_scale = Mul(static_cast<float>(mx - mn), static_cast<float>(1.0 / 255.0));
  }
}

// Equalize's lookup table from a channel's histogram of n pixels (PIL's and torchvision's):
// step = (n - count of the last non-empty bin) / 255; lut[k] = (cum[k - 1] + step / 2) / step,
// at most 255; the identity when step is 0.
SLUICE_HD void EqualizeLut(const uint32_t* hist, int64_t n, uint8_t* lut) {
  int last = 255;
  while (last > 0 && hist[last] == 0) --last;
  const int64_t step = (n - static_cast<int64_t>(hist[last])) / 255;
  if (step == 0) {
    for (int k = 0; k < 256; ++k) lut[k] = static_cast<uint8_t>(k);
    return;
  }
  int64_t cum = step / 2;
  for (int k = 0; k < 256; ++k) {
    const int64_t v = cum / step;
    lut[k] = static_cast<uint8_t>(v > 255 ? 255 : v);
    cum += hist[k];
  }
}

// The mean of the floored luma over `pixels` pixels whose sum is `sum` (torch.mean in float32
// of integer values: the exact sum, divided in double, rounded once).
SLUICE_HD float MeanOf(uint64_t sum, int64_t pixels) {
  return pixels > 0 ? static_cast<float>(static_cast<double>(sum) / static_cast<double>(pixels)) : 0.0f;
}

}  // namespace color
}  // namespace sluice

#endif  // SLUICE_KERNELS_COLOR_COLOR_PARAMS_H_
