// Parameters and per-pixel math of the finish step: RGB8 pixels of one sample to its slot in the
// output batch, with ToTensor-style scaling, Normalize, the cast and the layout in one pass.
#ifndef SLUICE_KERNELS_FINISH_FINISH_PARAMS_H_
#define SLUICE_KERNELS_FINISH_FINISH_PARAMS_H_

#include <cstdint>

#include "core/hd.h"
#include "core/slot.h"
#include "sluice/types.h"

namespace sluice {

struct FinishParams {
  DType dtype = DType::kFloat32;  // kUInt8: raw values; float: value / 255, then normalized
  Layout layout = Layout::kNCHW;  // of the output batch
  bool normalize = false;
  float mean[3] = {0.f, 0.f, 0.f};
  float std[3] = {1.f, 1.f, 1.f};
};

// torchvision's order of operations in float32: x / 255, then (x - mean) / std.
SLUICE_HD float NormalizedValue(uint8_t v, const FinishParams& p, int c) {
  const float x = static_cast<float>(v) / 255.0f;
  return p.normalize ? (x - p.mean[c]) / p.std[c] : x;
}

}  // namespace sluice

#endif  // SLUICE_KERNELS_FINISH_FINISH_PARAMS_H_
