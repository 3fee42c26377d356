// The crop and resize ops (RandomResizedCrop, Resize, CenterCrop, RandomCrop, Pad): their
// parameter draws, with torchvision's exact formulas (Python's round-half-to-even where
// torchvision calls round()), exposed for tests. Their op table entries: resize_crop_ops.cc.
//
// Thread-safety: pure functions.
#ifndef SLUICE_OPS_RESIZE_CROP_OPS_H_
#define SLUICE_OPS_RESIZE_CROP_OPS_H_

#include "core/image_view.h"
#include "core/rng.h"
#include "ops/sample_draw.h"
#include "sluice/status.h"
#include "sluice/transforms.h"

namespace sluice {

// torchvision RandomResizedCrop.get_params: the window (x, y, w, h) in a width x height image.
Rect DrawResizedCropWindow(SampleRng& rng, int width, int height, const transforms::RandomResizedCrop& t);

// torchvision _compute_resized_output_size: (height, width) after Resize.
void ResizedSize(int width, int height, const transforms::Resize& t, int* out_w, int* out_h);

// torchvision center_crop on one axis: padding (diff // 2 before) when the crop is larger,
// else offset round((len - size) / 2).
AxisWindow CenterCropAxis(int len, int size);

// torchvision v2 RandomCrop._get_params on both axes. Fails (InvalidArgument) when the crop
// does not fit the padded image.
Status DrawRandomCrop(SampleRng& rng, int width, int height, const transforms::RandomCrop& t, AxisWindow* x,
                      AxisWindow* y);

}  // namespace sluice

#endif  // SLUICE_OPS_RESIZE_CROP_OPS_H_
