// ElasticTransform's displacement and warp (torchvision.transforms.v2's, CPU only; sigma > 0). Per sample,
// two noise planes u ~ U[-1, 1) (Philox on the pixel index with the step's stream key: x from the
// first word, y from the second), each blurred by a Gaussian of side k = int(8 sigma + 1), made
// odd, with torchvision's float32 weights for (sigma_x, sigma_y) and reflect padding (separably,
// in double); then dx = blur_x * alpha_x / height and dy = blur_y * alpha_y / width (torchvision
// divides by the other side) in float32. Output pixel (j, i) reads grid_sample's unnormalized
// point of the identity grid plus (dx, dy): ((base_j + dx + 1) * w - 1) / 2, base_j =
// (2 j + 1) / w - 1, i.e. about j + dx * w / 2, with the step's filter and fill (SamplePoint).
//
// Thread-safety: reentrant; the scratch vectors are the caller's.
#ifndef SLUICE_KERNELS_FILTER_ELASTIC_H_
#define SLUICE_KERNELS_FILTER_ELASTIC_H_

#include <vector>

#include "core/image_view.h"
#include "kernels/filter/filter_params.h"

namespace sluice {

// The displacement of a w x h image, torchvision's layout: field[(y * w + x) * 2 + {0: dx, 1: dy}],
// in normalized grid units. `scratch` holds the noise and the row sums.
void ElasticDisplacement(const FilterStep& f, int w, int h, std::vector<float>* field, std::vector<double>* scratch);

// REQUIRES: f.kind == kElastic; in and out the same size, 3 channels, not overlapping.
void ElasticCpu(const FilterStep& f, const ImageView& in, const MutableImageView& out, std::vector<double>* scratch);

}  // namespace sluice

#endif  // SLUICE_KERNELS_FILTER_ELASTIC_H_
