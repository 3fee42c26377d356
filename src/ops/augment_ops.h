// The auto-augment ops (RandAugment, TrivialAugmentWide, AutoAugment): torchvision's op table, their
// draws and what each drawn op does to the image, exposed for tests and bindings. Their op table
// entries: augment_ops.cc.
//
// Thread-safety: pure functions.
#ifndef SLUICE_OPS_AUGMENT_OPS_H_
#define SLUICE_OPS_AUGMENT_OPS_H_

#include <array>
#include <cstdint>

#include "core/rng.h"
#include "kernels/color/color_params.h"
#include "kernels/filter/filter_params.h"
#include "ops/augment_draw.h"
#include "sluice/transforms.h"

namespace sluice {

// torchvision's name of an op ("ShearX", ...).
const char* AugmentOpName(AugmentOp op);

// The most ops one RandAugment draws (num_ops): each may be a filter pass or a colour step.
inline constexpr int kMaxRandAugmentOps = 8;

// RandAugment's num_ops draws (op uniform, then the sign for signed ops) for a width x height
// image into out[0, t.num_ops); returns how many. REQUIRES: out holds kMaxRandAugmentOps.
int DrawRandAugment(SampleRng& rng, int width, int height, const transforms::RandAugment& t, AugmentDraw* out);

// TrivialAugmentWide's draw: an op, a magnitude bin (for ops with magnitudes), a sign.
AugmentDraw DrawTrivialAugment(SampleRng& rng, const transforms::TrivialAugmentWide& t);

// AutoAugment's draw for a width x height image: a sub-policy (its index in *policy), then for
// each of its two ops whether it applies (its probability), and the sign; returns how many
// apply (0 to 2), in order.
int DrawAutoAugment(SampleRng& rng, int width, int height, const transforms::AutoAugment& t, AugmentDraw* out,
                    int* policy);
inline constexpr int kAutoAugmentPolicies = 3;          // ImageNet, CIFAR10, SVHN
inline constexpr int kAutoAugmentSubPolicies = 25;      // in each

// AugMix's draw (AugMixDraw) for a width x height image: Dirichlet weights, then each chain's
// depth and ops, with AugMix's magnitude tables.
void DrawAugMix(SampleRng& rng, int width, int height, const transforms::AugMix& t, AugMixDraw* out);

// What a drawn op does to a width x height image: nothing (Identity), a colour step (kind and
// factor as ColorStep holds it, with the double factor torchvision blends with), or a filter
// (sharpness; shears, translations and rotations as whole-image warps with `interpolation`
// and `fill`, shears about the top-left corner as torchvision's center=[0, 0]).
struct AugmentStep {
  enum class Type : uint8_t { kNone, kColor, kFilter } type = Type::kNone;
  ColorKind color = ColorKind::kBrightness;
  double factor = 0.0;
  FilterStep filter;
};
// `mask_fill` false: torchvision's fill=None (the zero-padded bilinear blend, WarpParams).
AugmentStep AugmentToStep(const AugmentDraw& d, int width, int height, transforms::Interpolation interpolation,
                          const std::array<uint8_t, 3>& fill, bool mask_fill = true);

}  // namespace sluice

#endif  // SLUICE_OPS_AUGMENT_OPS_H_
