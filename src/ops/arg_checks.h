// Argument checks shared by the op table's entries. Errors (InvalidArgument) name the transform
// and the argument, with torchvision's wording where it has one.
//
// Thread-safety: pure functions.
#ifndef SLUICE_OPS_ARG_CHECKS_H_
#define SLUICE_OPS_ARG_CHECKS_H_

#include <array>

#include "sluice/status.h"
#include "sluice/transforms.h"

namespace sluice {

// height, width > 0.
Status CheckSize(const char* op, int height, int width);
// p in [0, 1].
Status CheckProbability(const char* op, double p);
// A finite (min, max) with min <= max.
Status CheckRange(const char* op, const char* arg, const std::array<double, 2>& range);
// ColorJitter's ranges: brightness, contrast and saturation with 0 <= min <= max; hue with
// -0.5 <= min <= max <= 0.5.
Status CheckColorRanges(const char* op, const std::array<double, 2>& brightness, const std::array<double, 2>& contrast,
                        const std::array<double, 2>& saturation, const std::array<double, 2>& hue);
// Non-negative padding on every side.
Status CheckPadding(const char* op, const std::array<int, 4>& padding);
// RandomResizedCrop takes BILINEAR or BICUBIC; warps NEAREST or BILINEAR.
Status CheckResizeInterpolation(const char* op, transforms::Interpolation i);
Status CheckWarpInterpolation(const char* op, transforms::Interpolation i);

}  // namespace sluice

#endif  // SLUICE_OPS_ARG_CHECKS_H_
