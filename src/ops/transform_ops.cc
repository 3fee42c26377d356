#include "ops/transform_ops.h"

#include <algorithm>
#include <cmath>

namespace sluice {

int RoundHalfEven(double v) { return static_cast<int>(std::nearbyint(v)); }

Rect DrawResizedCropWindow(SampleRng& rng, int width, int height,
                           const transforms::RandomResizedCrop& t) {
  const double area = static_cast<double>(height) * width;
  const double log_r0 = std::log(t.ratio[0]), log_r1 = std::log(t.ratio[1]);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target_area = area * rng.Uniform(t.scale[0], t.scale[1]);
    const double aspect = std::exp(rng.Uniform(log_r0, log_r1));
    const int w = RoundHalfEven(std::sqrt(target_area * aspect));
    const int h = RoundHalfEven(std::sqrt(target_area / aspect));
    if (0 < w && w <= width && 0 < h && h <= height) {
      const int i = static_cast<int>(rng.RandInt(0, height - h + 1));
      const int j = static_cast<int>(rng.RandInt(0, width - w + 1));
      return Rect{j, i, w, h};
    }
  }
  // Fallback to a central crop with the ratio clamped.
  const double in_ratio = static_cast<double>(width) / height;
  const double rmin = std::min(t.ratio[0], t.ratio[1]), rmax = std::max(t.ratio[0], t.ratio[1]);
  int w, h;
  if (in_ratio < rmin) {
    w = width;
    h = RoundHalfEven(w / rmin);
  } else if (in_ratio > rmax) {
    h = height;
    w = RoundHalfEven(h * rmax);
  } else {
    w = width;
    h = height;
  }
  return Rect{(width - w) / 2, (height - h) / 2, w, h};
}

void ResizedSize(int width, int height, const transforms::Resize& t, int* out_w, int* out_h) {
  if (t.width > 0) {
    *out_w = t.width;
    *out_h = t.height;
    return;
  }
  const bool w_short = width <= height;
  const int64_t shorter = w_short ? width : height, longer = w_short ? height : width;
  int64_t new_short = t.height;
  int64_t new_long = static_cast<int64_t>(static_cast<double>(new_short * longer) / static_cast<double>(shorter));
  if (t.max_size > 0 && new_long > t.max_size) {
    new_short = static_cast<int64_t>(static_cast<double>(t.max_size * new_short) / static_cast<double>(new_long));
    new_long = t.max_size;
  }
  *out_w = static_cast<int>(w_short ? new_short : new_long);
  *out_h = static_cast<int>(w_short ? new_long : new_short);
}

AxisWindow CenterCropAxis(int len, int size) {
  if (size > len) return AxisWindow{-((size - len) / 2), size};
  return AxisWindow{RoundHalfEven((len - size) / 2.0), size};
}

Status DrawRandomCrop(SampleRng& rng, int width, int height, const transforms::RandomCrop& t,
                      AxisWindow* x, AxisWindow* y) {
  int pad_left = t.padding[0], pad_top = t.padding[1];
  int padded_w = width + t.padding[0] + t.padding[2];
  int padded_h = height + t.padding[1] + t.padding[3];
  if (t.pad_if_needed) {
    if (padded_h < t.height) {
      const int diff = t.height - padded_h;
      pad_top += diff;
      padded_h += 2 * diff;
    }
    if (padded_w < t.width) {
      const int diff = t.width - padded_w;
      pad_left += diff;
      padded_w += 2 * diff;
    }
  }
  if (padded_h < t.height || padded_w < t.width)
    return InvalidArgument("RandomCrop: crop size ", t.height, "x", t.width,
                           " (height x width) is larger than the ",
                           (t.padding != std::array<int, 4>{0, 0, 0, 0} ? "padded " : ""),
                           "image size ", padded_h, "x", padded_w,
                           "; pass pad_if_needed=True to pad small images");
  const int top = padded_h > t.height ? static_cast<int>(rng.RandInt(0, padded_h - t.height + 1)) : 0;
  const int left = padded_w > t.width ? static_cast<int>(rng.RandInt(0, padded_w - t.width + 1)) : 0;
  *x = AxisWindow{left - pad_left, t.width};
  *y = AxisWindow{top - pad_top, t.height};
  return Status::OK();
}

namespace {

double Float32(double v) { return static_cast<double>(static_cast<float>(v)); }

constexpr double kPi = 3.14159265358979323846;

double Radians(double degrees) { return degrees * (kPi / 180.0); }  // as Python's math.radians

}  // namespace

void DrawCutout(SampleRng& rng, int width, int height, const transforms::Cutout& t, bool finished, EraseOps* ops) {
  for (int k = 0; k < t.n_holes && ops->num < EraseOps::kMaxRects; ++k) {
    const int y = static_cast<int>(rng.RandInt(0, height)), x = static_cast<int>(rng.RandInt(0, width));
    const int half = t.length / 2;
    EraseRect& r = ops->rects[ops->num++];
    r.y0 = std::clamp(y - half, 0, height), r.y1 = std::clamp(y + half, 0, height);
    r.x0 = std::clamp(x - half, 0, width), r.x1 = std::clamp(x + half, 0, width);
    r.finished = finished;
  }
}

bool DrawErasing(SampleRng& rng, int width, int height, const transforms::RandomErasing& t, Rect* r) {
  if (!(rng.Uniform01() < t.p)) return false;
  const double area = static_cast<double>(height) * width;
  const double log_r0 = std::log(t.ratio[0]), log_r1 = std::log(t.ratio[1]);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double erase_area = area * Float32(rng.Uniform(t.scale[0], t.scale[1]));
    const double aspect = std::exp(Float32(rng.Uniform(log_r0, log_r1)));
    const int h = RoundHalfEven(std::sqrt(erase_area * aspect));
    const int w = RoundHalfEven(std::sqrt(erase_area / aspect));
    if (!(h < height && w < width)) continue;
    const int i = static_cast<int>(rng.RandInt(0, height - h + 1));
    const int j = static_cast<int>(rng.RandInt(0, width - w + 1));
    *r = Rect{j, i, w, h};
    return true;
  }
  return false;
}

AffineDraw DrawRotation(SampleRng& rng, const transforms::RandomRotation& t) {
  AffineDraw d;
  d.angle = -Float32(rng.Uniform(t.degrees[0], t.degrees[1]));
  return d;
}

AffineDraw DrawAffine(SampleRng& rng, int width, int height, const transforms::RandomAffine& t) {
  AffineDraw d;
  d.angle = -Float32(rng.Uniform(t.degrees[0], t.degrees[1]));
  const double max_dx = t.translate[0] * width, max_dy = t.translate[1] * height;
  d.tx = RoundHalfEven(Float32(rng.Uniform(-max_dx, max_dx)));
  d.ty = RoundHalfEven(Float32(rng.Uniform(-max_dy, max_dy)));
  d.scale = Float32(rng.Uniform(t.scale[0], t.scale[1]));
  d.shear_x = Float32(rng.Uniform(t.shear[0], t.shear[1]));
  d.shear_y = Float32(rng.Uniform(t.shear[2], t.shear[3]));
  return d;
}

void InverseAffineMatrix(const AffineDraw& d, int width, int height, const double* center, double m[6]) {
  const double cx = center != nullptr ? center[0] - width * 0.5 : 0.0;
  const double cy = center != nullptr ? center[1] - height * 0.5 : 0.0;
  const double rot = Radians(d.angle), sx = Radians(d.shear_x), sy = Radians(d.shear_y);
  const double cos_sy = std::cos(sy), tan_sx = std::tan(sx);
  const double a = std::cos(rot - sy) / cos_sy;
  const double b = -(a * tan_sx + std::sin(rot));
  const double c = std::sin(rot - sy) / cos_sy;
  const double e = std::cos(rot) - c * tan_sx;
  const double ctx = cx + d.tx, cty = cy + d.ty;
  m[0] = e / d.scale;
  m[1] = -b / d.scale;
  m[3] = -c / d.scale;
  m[4] = a / d.scale;
  m[2] = 0.0 + (cx - m[0] * ctx - m[1] * cty);
  m[5] = 0.0 + (cy - m[3] * ctx - m[4] * cty);
}

void GaussianKernel1d(int size, float sigma, float* weights) {
  const float lim = static_cast<float>((size - 1) / (2.0 * std::sqrt(2.0)));
  // torch.linspace: start + i * step for the first half, end - (size - 1 - i) * step after.
  const float step = size > 1 ? (lim - -lim) / static_cast<float>(size - 1) : 0.0f;
  float sum = 0.0f;
  for (int i = 0; i < size; ++i) {
    const float x = i < size / 2 ? -lim + step * static_cast<float>(i) : lim - step * static_cast<float>(size - 1 - i);
    const float q = x / sigma;
    weights[i] = std::exp(-(q * q));  // the largest exponent is 0 (the centre), so softmax's shift is a no-op
    sum += weights[i];
  }
  for (int i = 0; i < size; ++i) weights[i] /= sum;
}

FilterStep DrawGaussianBlur(SampleRng& rng, const transforms::GaussianBlur& t) {
  FilterStep f;
  f.kind = FilterKind::kGaussianBlur;
  const float sigma = static_cast<float>(rng.Uniform(t.sigma[0], t.sigma[1]));
  f.sigma = sigma;
  f.kx = t.kernel_w;
  f.ky = t.kernel_h;
  GaussianKernel1d(f.kx, sigma, f.wx);
  GaussianKernel1d(f.ky, sigma, f.wy);
  return f;
}

const char* AugmentOpName(AugmentOp op) {
  static const char* kNames[kNumAugmentOps] = {
      "Identity", "ShearX",     "ShearY",    "TranslateX", "TranslateY", "Rotate",       "Brightness",
      "Color",    "Contrast",   "Sharpness", "Posterize",  "Solarize",   "AutoContrast", "Equalize"};
  return kNames[static_cast<int>(op)];
}

float LinspaceF32(double start, double end, int n, int i) {
  const float s = static_cast<float>(start), e = static_cast<float>(end);
  if (n == 1) return s;
  const float step = (e - s) / static_cast<float>(n - 1);
  return i < n / 2 ? std::fmaf(step, static_cast<float>(i), s) : std::fmaf(-step, static_cast<float>(n - 1 - i), e);
}

namespace {

bool Signed(AugmentOp op) {
  return op != AugmentOp::kIdentity && op != AugmentOp::kPosterize && op != AugmentOp::kSolarize &&
         op != AugmentOp::kAutoContrast && op != AugmentOp::kEqualize;
}

bool HasMagnitudes(AugmentOp op) {
  return op != AugmentOp::kIdentity && op != AugmentOp::kAutoContrast && op != AugmentOp::kEqualize;
}

// Bin `bin` of an op's magnitude table (torchvision's _AUGMENTATION_SPACE): RandAugment's, or
// TrivialAugmentWide's (`wide`), for a width x height image.
double Magnitude(AugmentOp op, bool wide, int bins, int bin, int width, int height) {
  switch (op) {
    case AugmentOp::kShearX:
    case AugmentOp::kShearY: return LinspaceF32(0.0, wide ? 0.99 : 0.3, bins, bin);
    case AugmentOp::kTranslateX: return LinspaceF32(0.0, wide ? 32.0 : 150.0 / 331.0 * width, bins, bin);
    case AugmentOp::kTranslateY: return LinspaceF32(0.0, wide ? 32.0 : 150.0 / 331.0 * height, bins, bin);
    case AugmentOp::kRotate: return LinspaceF32(0.0, wide ? 135.0 : 30.0, bins, bin);
    case AugmentOp::kBrightness:
    case AugmentOp::kColor:
    case AugmentOp::kContrast:
    case AugmentOp::kSharpness: return LinspaceF32(0.0, wide ? 0.99 : 0.9, bins, bin);
    case AugmentOp::kPosterize: {
      // (8 - (arange(bins) / ((bins - 1) / d))).round().int(), in float32, d = 4 (6 when wide)
      const float q = static_cast<float>(bin) / static_cast<float>((bins - 1) / (wide ? 6.0 : 4.0));
      return static_cast<int>(std::nearbyint(8.0f - q));
    }
    case AugmentOp::kSolarize: return LinspaceF32(1.0, 0.0, bins, bin);
    default: return 0.0;
  }
}

AugmentDraw DrawAugmentOp(SampleRng& rng, bool wide, int bins, int magnitude_bin, int width, int height) {
  AugmentDraw d;
  d.op = static_cast<AugmentOp>(rng.RandInt(0, kNumAugmentOps));
  if (!HasMagnitudes(d.op)) return d;
  const int bin = magnitude_bin >= 0 ? magnitude_bin : static_cast<int>(rng.RandInt(0, bins));
  d.magnitude = Magnitude(d.op, wide, bins, bin, width, height);
  if (Signed(d.op) && rng.Uniform01() <= 0.5) d.magnitude = -d.magnitude;
  return d;
}

}  // namespace

int DrawRandAugment(SampleRng& rng, int width, int height, const transforms::RandAugment& t, AugmentDraw* out) {
  for (int i = 0; i < t.num_ops; ++i)
    out[i] = DrawAugmentOp(rng, false, t.num_magnitude_bins, t.magnitude, width, height);
  return t.num_ops;
}

AugmentDraw DrawTrivialAugment(SampleRng& rng, const transforms::TrivialAugmentWide& t) {
  return DrawAugmentOp(rng, true, t.num_magnitude_bins, -1, 0, 0);
}

AugmentStep AugmentToStep(const AugmentDraw& d, int width, int height, transforms::Interpolation interpolation,
                          const std::array<uint8_t, 3>& fill) {
  AugmentStep s;
  const double m = d.magnitude;
  auto color = [&s](ColorKind kind, double factor) {
    s.type = AugmentStep::Type::kColor;
    s.color = kind;
    s.factor = factor;
  };
  switch (d.op) {
    case AugmentOp::kIdentity: break;
    case AugmentOp::kShearX:
    case AugmentOp::kShearY:
    case AugmentOp::kTranslateX:
    case AugmentOp::kTranslateY:
    case AugmentOp::kRotate: {
      AffineDraw a;
      const double degrees = std::atan(m) * (180.0 / kPi);  // math.degrees(math.atan(m))
      if (d.op == AugmentOp::kShearX) a.shear_x = degrees;
      if (d.op == AugmentOp::kShearY) a.shear_y = degrees;
      if (d.op == AugmentOp::kTranslateX) a.tx = static_cast<int>(m);  // int(): toward zero
      if (d.op == AugmentOp::kTranslateY) a.ty = static_cast<int>(m);
      if (d.op == AugmentOp::kRotate) a.angle = -m;  // rotate(m) is affine(-m)
      const bool shear = d.op == AugmentOp::kShearX || d.op == AugmentOp::kShearY;
      const double corner[2] = {0.0, 0.0};
      s.type = AugmentStep::Type::kFilter;
      FilterStep& f = s.filter;
      f.kind = FilterKind::kAffine;
      WarpParams& w = f.warp;
      w.enabled = true;
      w.filter = interpolation == transforms::Interpolation::kBilinear ? WarpFilter::kBilinear : WarpFilter::kNearest;
      w.src_w = width, w.src_h = height;
      InverseAffineMatrix(a, width, height, shear ? corner : nullptr, w.m);
      for (size_t c = 0; c < 3; ++c) w.fill[c] = fill[c];
      w.x = WarpAxis{0, width, false};
      w.y = WarpAxis{0, height, false};
      w.float_grid = true;  // torchvision's float32 grid: its ties (e.g. shear 0.2 on odd rows) exactly
      break;
    }
    case AugmentOp::kBrightness: color(ColorKind::kBrightness, 1.0 + m); break;
    case AugmentOp::kColor: color(ColorKind::kSaturation, 1.0 + m); break;
    case AugmentOp::kContrast: color(ColorKind::kContrast, 1.0 + m); break;
    case AugmentOp::kSharpness:
      s.type = AugmentStep::Type::kFilter;
      s.filter.kind = FilterKind::kSharpness;
      s.filter.alpha = static_cast<float>(1.0 - (1.0 + m));
      break;
    case AugmentOp::kPosterize: {
      const int bits = static_cast<int>(m);
      color(ColorKind::kPosterize, static_cast<double>(((1 << bits) - 1) << (8 - bits)));
      break;
    }
    case AugmentOp::kSolarize: color(ColorKind::kSolarize, 255.0 * m); break;
    case AugmentOp::kAutoContrast: color(ColorKind::kAutoContrast, 0.0); break;
    case AugmentOp::kEqualize: color(ColorKind::kEqualize, 0.0); break;
  }
  return s;
}

void DrawGridMask(SampleRng& rng, const transforms::GridMask& t, bool finished, GridParams* out) {
  const int tile = static_cast<int>(rng.RandInt(t.tile[0], static_cast<int64_t>(t.tile[1]) + 1));
  const float angle = static_cast<float>(rng.Uniform(t.angle[0], t.angle[1]));
  const float shift_x = static_cast<float>(rng.Uniform(t.shift_x[0], t.shift_x[1]));
  const float shift_y = static_cast<float>(rng.Uniform(t.shift_y[0], t.shift_y[1]));
  const float ft = static_cast<float>(tile);
  out->enabled = true;
  out->finished = finished;
  out->ca = std::cos(angle) / ft;
  out->sa = std::sin(angle) / ft;
  out->sx = shift_x / ft;
  out->sy = shift_y / ft;
  out->ratio = static_cast<float>(t.ratio);
}

}  // namespace sluice
