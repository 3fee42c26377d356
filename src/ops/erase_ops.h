// The erasing ops (Cutout, RandomErasing, GridMask): their parameter draws, exposed for tests.
// Their op table entries: erase_ops.cc.
//
// Thread-safety: pure functions.
#ifndef SLUICE_OPS_ERASE_OPS_H_
#define SLUICE_OPS_ERASE_OPS_H_

#include "core/image_view.h"
#include "core/rng.h"
#include "kernels/erase/erase_params.h"
#include "sluice/transforms.h"

namespace sluice {

// Cutout's holes in a width x height image, as the reference code draws them (y, then x,
// uniform over the image), appended to `ops` with the given stage (`finished`: after Normalize).
void DrawCutout(SampleRng& rng, int width, int height, const transforms::Cutout& t, bool finished, EraseOps* ops);

// torchvision RandomErasing.make_params on a width x height image: whether to erase (p) and
// the rectangle; false when not erasing (not drawn, or 10 tries gave no rectangle that fits).
bool DrawErasing(SampleRng& rng, int width, int height, const transforms::RandomErasing& t, Rect* r);

// GridMask's grid for one sample: tile, angle and shifts drawn uniformly from their ranges, in
// DALI's float32 factors; `finished`: after Normalize (the output becomes 0), else the pixels.
void DrawGridMask(SampleRng& rng, const transforms::GridMask& t, bool finished, GridParams* out);

}  // namespace sluice

#endif  // SLUICE_OPS_ERASE_OPS_H_
