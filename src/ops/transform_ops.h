// Per-sample parameter drawing for the geometric transforms, with torchvision's exact
// formulas (including Python's round-half-to-even where torchvision calls round()).
//
// Thread-safety: pure functions.
#ifndef SLUICE_OPS_TRANSFORM_OPS_H_
#define SLUICE_OPS_TRANSFORM_OPS_H_

#include "core/image_view.h"
#include "core/rng.h"
#include "kernels/color/color_params.h"
#include "kernels/erase/erase_params.h"
#include "kernels/filter/filter_params.h"
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

// Cutout's holes in a width x height image, as the reference code draws them (y, then x,
// uniform over the image), appended to `ops` with the given stage.
void DrawCutout(SampleRng& rng, int width, int height, const transforms::Cutout& t, bool finished, EraseOps* ops);

// torchvision RandomErasing.make_params on a width x height image: whether to erase (p) and
// the rectangle; false when not erasing (not drawn, or 10 tries gave no rectangle that fits).
bool DrawErasing(SampleRng& rng, int width, int height, const transforms::RandomErasing& t, Rect* r);

// One draw of RandomAffine's parameters (RandomRotation draws only the angle), as torchvision's
// make_params: angle, scale and shears as float32 values, translation rounded to whole pixels.
struct AffineDraw {
  double angle = 0.0;  // degrees, affine()'s convention (RandomRotation's angle is -angle)
  int tx = 0, ty = 0;
  double scale = 1.0;
  double shear_x = 0.0, shear_y = 0.0;  // degrees
};

AffineDraw DrawRotation(SampleRng& rng, const transforms::RandomRotation& t);
AffineDraw DrawAffine(SampleRng& rng, int width, int height, const transforms::RandomAffine& t);

// torchvision's _get_inverse_affine_matrix for a width x height image: the matrix that maps
// centred output coordinates to centred input coordinates. The centre is the image's
// (width / 2, height / 2), or `center` (pixel coordinates) when given.
void InverseAffineMatrix(const AffineDraw& d, int width, int height, const double* center, double m[6]);

// GridMask's grid for one sample: tile, angle and shifts drawn uniformly from their ranges, in
// DALI's float32 factors; `finished`: after Normalize (the output becomes 0), else the pixels.
void DrawGridMask(SampleRng& rng, const transforms::GridMask& t, bool finished, GridParams* out);

// torchvision's _get_gaussian_kernel1d in float32: softmax(-(x / sigma)^2) over x = linspace(
// -lim, lim, size), lim = (size - 1) / (2 sqrt(2)). REQUIRES: 1 <= size <= FilterStep::kMaxTaps.
void GaussianKernel1d(int size, float sigma, float* weights);

// GaussianBlur's filter for one sample: sigma uniform in t.sigma (as a float32 value).
FilterStep DrawGaussianBlur(SampleRng& rng, const transforms::GaussianBlur& t);

// The ops of RandAugment and TrivialAugmentWide, in torchvision's table order.
enum class AugmentOp : uint8_t {
  kIdentity, kShearX, kShearY, kTranslateX, kTranslateY, kRotate, kBrightness, kColor, kContrast,
  kSharpness, kPosterize, kSolarize, kAutoContrast, kEqualize
};
inline constexpr int kNumAugmentOps = 14;

// torchvision's name of an op ("ShearX", ...).
const char* AugmentOpName(AugmentOp op);

// One drawn op with its magnitude as torchvision passes it to _apply_image_or_video_transform:
// the float32 table value widened to double, negated for signed ops on a coin flip; 0 for ops
// without magnitudes.
struct AugmentDraw {
  AugmentOp op = AugmentOp::kIdentity;
  double magnitude = 0.0;
};

// RandAugment's num_ops draws (op uniform, then the sign for signed ops) for a width x height
// image; returns how many (t.num_ops).
int DrawRandAugment(SampleRng& rng, int width, int height, const transforms::RandAugment& t, AugmentDraw* out);

// TrivialAugmentWide's draw: an op, a magnitude bin (for ops with magnitudes), a sign.
AugmentDraw DrawTrivialAugment(SampleRng& rng, const transforms::TrivialAugmentWide& t);

// What a drawn op does to a width x height image: nothing (Identity), a colour step (kind and
// factor as ColorStep holds it, with the double factor torchvision blends with), or a filter
// (sharpness; shears, translations and rotations as whole-image warps with `interpolation`
// and `fill`, shears about the top-left corner as torchvision's center=[0, 0]).
struct AugmentStep {
  enum class Type : uint8_t { kNone, kColor, kFilter } type = Type::kNone;
  ColorKind color = ColorKind::kBrightness;
  double factor = 0.0;
  FilterStep filter;
};
AugmentStep AugmentToStep(const AugmentDraw& d, int width, int height, transforms::Interpolation interpolation,
                          const std::array<uint8_t, 3>& fill);

// torchvision's float32 linspace(start, end, n)[i] (fused multiply-adds from each end).
float LinspaceF32(double start, double end, int n, int i);

}  // namespace sluice

#endif  // SLUICE_OPS_TRANSFORM_OPS_H_
