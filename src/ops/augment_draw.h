// The auto-augment ops and their draws as plain values: the op names (AugmentOp), one drawn op
// (AugmentDraw) and AugMix's draw of a sample (AugMixDraw), which SampleGeometry holds. The draws
// themselves: augment_ops.h.
//
// Thread-safety: plain values.
#ifndef SLUICE_OPS_AUGMENT_DRAW_H_
#define SLUICE_OPS_AUGMENT_DRAW_H_

#include <array>
#include <cstdint>

#include "sluice/transforms.h"

namespace sluice {

// The ops of RandAugment and TrivialAugmentWide, in torchvision's table order (kNumAugmentOps of
// them), then Invert, which only AutoAugment's policies use.
enum class AugmentOp : uint8_t {
  kIdentity, kShearX, kShearY, kTranslateX, kTranslateY, kRotate, kBrightness, kColor, kContrast,
  kSharpness, kPosterize, kSolarize, kAutoContrast, kEqualize, kInvert
};
inline constexpr int kNumAugmentOps = 14;

// One drawn op with its magnitude as torchvision passes it to _apply_image_or_video_transform:
// the float32 table value widened to double, negated for signed ops on a coin flip; 0 for ops
// without magnitudes.
struct AugmentDraw {
  AugmentOp op = AugmentOp::kIdentity;
  double magnitude = 0.0;
};

// AugMix's draw for a width x height image: the weight of the image (m0), the chains' weights
// and their ops with torchvision's AugMix magnitudes (bin drawn below severity, sign).
struct AugMixDraw {
  int num_chains = 0;
  int depth[transforms::AugMix::kMaxChains] = {};
  AugmentDraw ops[transforms::AugMix::kMaxChains][transforms::AugMix::kMaxDepth];
  float m0 = 1.f;
  float w[transforms::AugMix::kMaxChains] = {};
  transforms::Interpolation interpolation = transforms::Interpolation::kBilinear;
  std::array<uint8_t, 3> fill = {0, 0, 0};
  bool mask_fill = false;  // a fill was given (else torchvision's fill=None)
};

}  // namespace sluice

#endif  // SLUICE_OPS_AUGMENT_DRAW_H_
