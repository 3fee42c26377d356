// AugMix on the CPU: a sample's drawn chains (AugMixDraw, augment_ops.h) applied to copies of the
// image, mixed with it in float32 in torchvision's order (m0 * image, then + w_i * chain_i for
// each chain in turn) and truncated to uint8 as .to(torch.uint8) does. Each op is the
// auto-augment ops' colour step or filter (AugmentToStep), so it matches RandAugment's op.
//
// Thread-safety: reentrant; the scratch is the caller's.
#ifndef SLUICE_OPS_AUGMIX_H_
#define SLUICE_OPS_AUGMIX_H_

#include <cstdint>
#include <vector>

#include "core/image_view.h"
#include "ops/augment_ops.h"

namespace sluice {

struct AugMixScratch {
  std::vector<uint8_t> chain[2];  // a chain's image, ping-ponged between its filters
  std::vector<float> mix;         // the weighted sum
  std::vector<double> rows;       // the filters' scratch
};

// REQUIRES: in and out the same size, 3 channels, not overlapping.
void ApplyAugMix(const AugMixDraw& d, const ImageView& in, const MutableImageView& out, AugMixScratch* scratch);

}  // namespace sluice

#endif  // SLUICE_OPS_AUGMIX_H_
