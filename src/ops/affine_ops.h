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

// RandomPerspective's make_params for a width x height image: the four corners' end points
// (top-left, top-right, bottom-right, bottom-left; x, y), each moved inward by randint(0, bound)
// with bound = int(distortion_scale * (side // 2)) + 1.
void DrawPerspective(SampleRng& rng, int width, int height, const transforms::RandomPerspective& t, int end[4][2]);

}  // namespace sluice

#endif  // SLUICE_OPS_AFFINE_OPS_H_
