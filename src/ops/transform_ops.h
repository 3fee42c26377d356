// Per-sample parameter drawing for the geometric transforms, with torchvision's exact
// formulas (including Python's round-half-to-even where torchvision calls round()).
//
// Thread-safety: pure functions.
#ifndef SLUICE_OPS_TRANSFORM_OPS_H_
#define SLUICE_OPS_TRANSFORM_OPS_H_

#include "core/image_view.h"
#include "core/rng.h"
#include "sluice/transforms.h"

namespace sluice {

// Python's round() for values that fit in an int (ties to even).
int RoundHalfEven(double v);

// torchvision RandomResizedCrop.get_params: the window (x, y, w, h) in a width x height image.
Rect DrawResizedCropWindow(SampleRng& rng, int width, int height,
                           const transforms::RandomResizedCrop& t);

// torchvision _compute_resized_output_size: (height, width) after Resize.
void ResizedSize(int width, int height, const transforms::Resize& t, int* out_w, int* out_h);

// A window placed on one axis of an image of length `len`: start may be negative and
// start + size may exceed len (the outside is padding).
struct AxisWindow {
  int start = 0;
  int size = 0;
};

// torchvision center_crop on one axis: padding (diff // 2 before) when the crop is larger,
// else offset round((len - size) / 2).
AxisWindow CenterCropAxis(int len, int size);

// torchvision v2 RandomCrop._get_params on both axes. Fails (InvalidArgument) when the crop
// does not fit the padded image.
Status DrawRandomCrop(SampleRng& rng, int width, int height, const transforms::RandomCrop& t,
                      AxisWindow* x, AxisWindow* y);

}  // namespace sluice

#endif  // SLUICE_OPS_TRANSFORM_OPS_H_
