// The warp ops (RandomRotation, RandomAffine): their parameter draws, as torchvision's
// make_params, exposed for tests and bindings. Their op table entries: affine_ops.cc.
//
// Thread-safety: pure functions.
#ifndef SLUICE_OPS_AFFINE_OPS_H_
#define SLUICE_OPS_AFFINE_OPS_H_

#include "core/rng.h"
#include "kernels/warp/affine_matrix.h"
#include "sluice/transforms.h"

namespace sluice {

// One draw of RandomAffine's parameters for a width x height image (RandomRotation draws only the
// angle): angle, scale and shears as float32 values, translation rounded to whole pixels.
AffineParams DrawRotation(SampleRng& rng, const transforms::RandomRotation& t);
AffineParams DrawAffine(SampleRng& rng, int width, int height, const transforms::RandomAffine& t);

}  // namespace sluice

#endif  // SLUICE_OPS_AFFINE_OPS_H_
