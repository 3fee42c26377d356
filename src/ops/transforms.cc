// The public description functions of sluice/transforms.h, answered from the op table.
#include "sluice/transforms.h"

#include "ops/op_registry.h"

namespace sluice::transforms {

namespace {
constexpr const char* kInterpolationNames[] = {"bilinear", "bicubic", "nearest"};  // Interpolation's order
constexpr const char* kPaddingModeNames[] = {"constant", "edge", "reflect", "symmetric"};  // PaddingMode's order
}  // namespace

const char* TransformName(const Transform& t) { return ImageOps().Find(t).name; }

Status Validate(const Transform& t) { return ImageOps().Find(t).validate(t); }

const char* InterpolationName(Interpolation i) { return kInterpolationNames[static_cast<int>(i)]; }

Result<Interpolation> ParseInterpolation(std::string_view name) {
  for (int i = 0; i < 3; ++i)
    if (name == kInterpolationNames[i]) return static_cast<Interpolation>(i);
  return InvalidArgument("interpolation must be one of 'nearest', 'bilinear', 'bicubic', got '", name, "'");
}

const char* PaddingModeName(PaddingMode m) { return kPaddingModeNames[static_cast<int>(m)]; }

Result<PaddingMode> ParsePaddingMode(std::string_view name) {
  for (int i = 0; i < 4; ++i)
    if (name == kPaddingModeNames[i]) return static_cast<PaddingMode>(i);
  return InvalidArgument("padding_mode must be one of 'constant', 'edge', 'reflect', 'symmetric', got '", name, "'");
}

}  // namespace sluice::transforms
