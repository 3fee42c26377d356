// CPU filters (GaussianBlur, sharpness, whole-image affine): filter_params.h's per-pixel math
// over an RGB8 image. The blur's row sums go to `scratch` (grown as needed, reused).
//
// Thread-safety: reentrant.
#ifndef SLUICE_KERNELS_FILTER_FILTER_CPU_H_
#define SLUICE_KERNELS_FILTER_FILTER_CPU_H_

#include <vector>

#include "core/image_view.h"
#include "kernels/filter/filter_params.h"

namespace sluice {

// REQUIRES: in and out have the same size, 3 channels, and do not overlap.
void FilterCpu(const FilterStep& f, const ImageView& in, const MutableImageView& out, std::vector<double>* scratch);

}  // namespace sluice

#endif  // SLUICE_KERNELS_FILTER_FILTER_CPU_H_
