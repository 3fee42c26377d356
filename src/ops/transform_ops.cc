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

}  // namespace sluice
