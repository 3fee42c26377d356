#include "ops/arg_checks.h"

#include <cmath>
#include <utility>

namespace sluice {

Status CheckSize(const char* op, int height, int width) {
  if (height <= 0 || width <= 0)
    return InvalidArgument(op, ": size must be positive, got (", height, ", ", width, ")");
  return Status::OK();
}

Status CheckProbability(const char* op, double p) {
  if (!(p >= 0.0 && p <= 1.0)) return InvalidArgument(op, ": p must be in [0, 1], got ", p);
  return Status::OK();
}

Status CheckRange(const char* op, const char* arg, const std::array<double, 2>& range) {
  const auto [lo, hi] = range;
  if (!(std::isfinite(lo) && std::isfinite(hi) && lo <= hi))
    return InvalidArgument(op, ": ", arg, " must be finite with min <= max, got (", lo, ", ", hi, ")");
  return Status::OK();
}

Status CheckColorRanges(const char* op, const std::array<double, 2>& brightness, const std::array<double, 2>& contrast,
                        const std::array<double, 2>& saturation, const std::array<double, 2>& hue) {
  const std::pair<const char*, const std::array<double, 2>*> factors[] = {
      {"brightness", &brightness}, {"contrast", &contrast}, {"saturation", &saturation}};
  for (const auto& [name, r] : factors)
    if (!(std::isfinite((*r)[0]) && std::isfinite((*r)[1]) && (*r)[0] >= 0 && (*r)[0] <= (*r)[1]))
      return InvalidArgument(op, ": ", name, " must be a range (min, max) with 0 <= min <= max, got (", (*r)[0], ", ",
                             (*r)[1], ")");
  if (!(hue[0] >= -0.5 && hue[0] <= hue[1] && hue[1] <= 0.5))
    return InvalidArgument(op, ": hue must be a range (min, max) with -0.5 <= min <= max <= 0.5, got (", hue[0], ", ",
                           hue[1], ")");
  return Status::OK();
}

Status CheckPadding(const char* op, const std::array<int, 4>& padding) {
  for (int p : padding)
    if (p < 0) return InvalidArgument(op, ": padding must be non-negative, got ", p);
  return Status::OK();
}

Status CheckResizeInterpolation(const char* op, transforms::Interpolation i) {
  if (i == transforms::Interpolation::kNearest)
    return InvalidArgument(op, ": interpolation must be BILINEAR or BICUBIC, got NEAREST");
  return Status::OK();
}

Status CheckWarpInterpolation(const char* op, transforms::Interpolation i) {
  if (i == transforms::Interpolation::kBicubic)
    return InvalidArgument(op, ": interpolation must be NEAREST or BILINEAR, got BICUBIC");
  return Status::OK();
}

}  // namespace sluice
