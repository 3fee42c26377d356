// Transform descriptions, named and defined as in torchvision.transforms.v2.
//
// These are plain values: a loader compiles a list of them into a plan (see docs/design.md);
// nothing runs op by op. Random choices come from the loader's seed, the epoch, the sample index
// and the transform's position in the list, so a sample gets the same augmentation whatever the
// thread, batch or device.
//
// Thread-safety: plain values.
#ifndef SLUICE_TRANSFORMS_H_
#define SLUICE_TRANSFORMS_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sluice/status.h"
#include "sluice/types.h"

namespace sluice::transforms {

// Resizes take kBilinear or kBicubic; rotations and affine warps take kNearest or kBilinear.
enum class Interpolation : uint8_t { kBilinear, kBicubic, kNearest };
const char* InterpolationName(Interpolation i);                 // "bilinear", "bicubic", "nearest"
Result<Interpolation> ParseInterpolation(std::string_view name);  // accepts the names above

// torchvision's padding modes: a constant `fill`; the edge pixel repeated; the image mirrored
// without its edge pixel (reflect: d c b | a b c d) or with it (symmetric: c b a | a b c d).
enum class PaddingMode : uint8_t { kConstant, kEdge, kReflect, kSymmetric };
const char* PaddingModeName(PaddingMode m);                    // "constant", "edge", "reflect", "symmetric"
Result<PaddingMode> ParsePaddingMode(std::string_view name);  // accepts the names above

// Crop a random window (area fraction in `scale`, aspect ratio in `ratio`, log-uniform) and
// resize it to height x width. The window is drawn from the file header before decoding, and
// only that window is decoded.
struct RandomResizedCrop {
  int height = 0, width = 0;
  std::array<double, 2> scale = {0.08, 1.0};
  std::array<double, 2> ratio = {3.0 / 4.0, 4.0 / 3.0};
  Interpolation interpolation = Interpolation::kBilinear;
  bool antialias = true;
};

// Resize to height x width, or, when width == 0, so that the shorter edge is `height`
// (torchvision's Resize(int)); `max_size` (0 = none) caps the longer edge in that mode.
struct Resize {
  int height = 0, width = 0;
  int max_size = 0;
  Interpolation interpolation = Interpolation::kBilinear;
  bool antialias = true;
};

// Crop the centre height x width (zero-padded when the image is smaller, as torchvision does).
// torchvision v2's random resizes, each a Resize of a size drawn per sample (so batches of them
// are lists unless a fixed-size crop or resize follows):
//   RandomResize: the shorter side an integer in [min_size, max_size), as Resize(int);
//   RandomShortestSize: the shorter side one of min_size[0, num_sizes), the longer capped at
//     max_size (0: none), both sides scaled by that ratio and truncated;
//   ScaleJitter: fit into target (height, width), times a scale drawn from scale_range,
//     truncated.
struct RandomResize {
  int min_size = 0, max_size = 0;
  Interpolation interpolation = Interpolation::kBilinear;
  bool antialias = true;
};
struct RandomShortestSize {
  static constexpr int kMaxSizes = 16;
  std::array<int, kMaxSizes> min_size = {};
  int num_sizes = 0;
  int max_size = 0;
  Interpolation interpolation = Interpolation::kBilinear;
  bool antialias = true;
};
struct ScaleJitter {
  int target_height = 0, target_width = 0;
  std::array<double, 2> scale_range = {0.1, 2.0};
  Interpolation interpolation = Interpolation::kBilinear;
  bool antialias = true;
};

// torchvision's RandomZoomOut: with probability p, the image placed at a random position on a
// canvas side_range times its size (drawn per sample, side_range[0] >= 1), the rest `fill`.
struct RandomZoomOut {
  std::array<uint8_t, 3> fill = {0, 0, 0};
  std::array<double, 2> side_range = {1.0, 4.0};
  double p = 0.5;
};

struct CenterCrop {
  int height = 0, width = 0;
};

// Crop a random height x width window, after optional constant padding (left, top, right,
// bottom). `pad_if_needed` pads an image smaller than the crop on both sides, as torchvision.
struct RandomCrop {
  int height = 0, width = 0;
  std::array<int, 4> padding = {0, 0, 0, 0};  // left, top, right, bottom
  bool pad_if_needed = false;
  std::array<uint8_t, 3> fill = {0, 0, 0};
  PaddingMode padding_mode = PaddingMode::kConstant;
};

struct RandomHorizontalFlip {
  double p = 0.5;
};

struct RandomVerticalFlip {
  double p = 0.5;
};

// torchvision's Pad: pixels added on the left, top, right and bottom, of colour `fill`
// (kConstant) or taken from the image (kEdge, kReflect, kSymmetric: see PaddingMode).
struct Pad {
  std::array<int, 4> padding = {0, 0, 0, 0};  // left, top, right, bottom
  std::array<uint8_t, 3> fill = {0, 0, 0};
  PaddingMode padding_mode = PaddingMode::kConstant;
};

// Rotate by an angle drawn uniformly from `degrees` (counter-clockwise, in degrees) about the
// centre (or `center`, in pixel coordinates of the image it is given), as torchvision's
// RandomRotation: the output has the input's size, or with `expand` the bounding box of the
// rotated image (so its size follows the angle); points that fall outside the input get
// `fill`. Interpolation kNearest (torchvision's default) or kBilinear. Composed with the
// resizes before it and the crops and flips after it into one resampling pass.
struct RandomRotation {
  std::array<double, 2> degrees = {0.0, 0.0};
  Interpolation interpolation = Interpolation::kNearest;
  std::array<uint8_t, 3> fill = {0, 0, 0};
  bool has_center = false;
  std::array<double, 2> center = {0.0, 0.0};  // x, y
  bool expand = false;
};

// torchvision's RandomAffine: rotation by an angle from `degrees`, translation by up to
// translate[0] * width and translate[1] * height pixels (rounded to whole pixels, as
// torchvision), scale from `scale`, and shear angles from `shear` (x range, then y range; a
// zero range leaves that shear out). expand=False, fill and interpolation as RandomRotation.
struct RandomAffine {
  std::array<double, 2> degrees = {0.0, 0.0};
  std::array<double, 2> translate = {0.0, 0.0};  // fractions in [0, 1]; 0: none
  std::array<double, 2> scale = {1.0, 1.0};
  std::array<double, 4> shear = {0.0, 0.0, 0.0, 0.0};
  Interpolation interpolation = Interpolation::kNearest;
  std::array<uint8_t, 3> fill = {0, 0, 0};
  bool has_center = false;
  std::array<double, 2> center = {0.0, 0.0};  // x, y
};

// Randomly change brightness, contrast, saturation and hue (torchvision's ColorJitter, with the
// formulas of torchvision.transforms.v2.functional on uint8 images). Each factor is drawn
// uniformly from its [min, max] range; a range of {1, 1} ({0, 0} for hue) leaves that
// adjustment out. The four run in a random order, as torchvision's do. Factors are >= 0; hue
// is in [-0.5, 0.5]. Colour transforms come after the crops, resizes and padding of the list
// (flips may follow): contrast depends on the mean of the image it is given.
struct ColorJitter {
  std::array<double, 2> brightness = {1.0, 1.0};
  std::array<double, 2> contrast = {1.0, 1.0};
  std::array<double, 2> saturation = {1.0, 1.0};
  std::array<double, 2> hue = {0.0, 0.0};
};

// torchvision's RandomChannelPermutation: the three channels in an order drawn uniformly per
// sample from the six (the unchanged one included). A pixel-stage transform, placed like
// ColorJitter.
struct RandomChannelPermutation {};

// torchvision's RandomPhotometricDistort: with probability p each, a brightness, a contrast, a
// saturation and a hue adjustment (ColorJitter's formulas), each factor drawn from its range;
// the contrast before the saturation or after the hue, at even odds; then, with probability p,
// the channels in a random order. Placed like ColorJitter.
struct RandomPhotometricDistort {
  std::array<double, 2> brightness = {0.875, 1.125};
  std::array<double, 2> contrast = {0.5, 1.5};
  std::array<double, 2> saturation = {0.5, 1.5};
  std::array<double, 2> hue = {-0.05, 0.05};
  double p = 0.5;
};

// With probability p, replace the image by its luma (0.2989 R + 0.587 G + 0.114 B, truncated)
// in all three channels, as torchvision's RandomGrayscale.
struct RandomGrayscale {
  double p = 0.1;
};

// torchvision's RandomSolarize: with probability p, every channel value at or above `threshold`
// (pixel values, at most 255) becomes 255 - value. A pixel-stage transform, placed like ColorJitter.
struct RandomSolarize {
  double threshold = 128.0;
  double p = 0.5;
};

// torchvision's RandomInvert, RandomPosterize, RandomAutocontrast and RandomEqualize: with
// probability p, 255 - value; each value's `bits` high bits kept (0 to 8); each channel
// stretched to [0, 255]; each channel through PIL's equalize table. Pixel-stage transforms,
// placed like ColorJitter.
struct RandomInvert {
  double p = 0.5;
};
struct RandomPosterize {
  int bits = 8;
  double p = 0.5;
};
struct RandomAutocontrast {
  double p = 0.5;
};
struct RandomEqualize {
  double p = 0.5;
};

// torchvision's RandomAdjustSharpness: with probability p, the image blended with its 3 x 3
// smoothed copy (centre weight 5/13; the border rows and columns kept) by `sharpness_factor`
// (0: smoothed, 1: unchanged, 2: sharpened; at least 0). A filter pass, placed like GaussianBlur.
struct RandomAdjustSharpness {
  double sharpness_factor = 1.0;
  double p = 0.5;
};

// torchvision's GaussianBlur: sigma drawn uniformly from `sigma` per sample (the same on both
// axes); a kernel_w x kernel_h kernel (odd sizes, at most 63), reflect padding. A pixel-stage
// transform, placed like ColorJitter (after the crops, resizes and padding).
struct GaussianBlur {
  int kernel_w = 3, kernel_h = 3;
  std::array<double, 2> sigma = {0.1, 2.0};
};

// torchvision's RandAugment on uint8 images: num_ops ops drawn uniformly from its 14 (Identity,
// ShearX/Y, TranslateX/Y, Rotate, Brightness, Color, Contrast, Sharpness, Posterize, Solarize,
// AutoContrast, Equalize), each at bin `magnitude` of num_magnitude_bins, with a random sign
// for the signed ones. Geometric ops use `interpolation` (kNearest or kBilinear) and `fill`.
// A pixel-stage transform, placed like ColorJitter; no flip may follow it.
struct RandAugment {
  int num_ops = 2;
  int magnitude = 9;
  int num_magnitude_bins = 31;
  Interpolation interpolation = Interpolation::kNearest;
  std::array<uint8_t, 3> fill = {0, 0, 0};
};

// torchvision's TrivialAugmentWide: one op from the same 14, at a magnitude bin drawn uniformly,
// with its wider ranges. Placement as RandAugment.
struct TrivialAugmentWide {
  int num_magnitude_bins = 31;
  Interpolation interpolation = Interpolation::kNearest;
  std::array<uint8_t, 3> fill = {0, 0, 0};
};

// torchvision's AutoAugment: per sample, one of the policy's 25 sub-policies, uniformly; each of
// its two ops applied with its probability, at its magnitude bin of RandAugment's table with 10
// bins (signed ops negated on a coin flip). Ops as RandAugment's, and Invert. `policy`: 0
// ImageNet, 1 CIFAR10, 2 SVHN (AutoAugmentPolicy). Placed like RandAugment.
struct AutoAugment {
  int policy = 0;
  Interpolation interpolation = Interpolation::kNearest;
  std::array<uint8_t, 3> fill = {0, 0, 0};
};

// Cutout (DeVries and Taylor, 2017): n_holes squares of side `length` (clipped at the image's
// edges; square [y - length/2, y + length/2) x [x - length/2, x + length/2)), centres drawn
// uniformly over the image, zeroed: after Normalize the output is 0 there (the reference code
// multiplies the normalized tensor by a mask), before it the pixels are 0. Comes after the
// geometric and colour transforms; runs in the finish step.
struct Cutout {
  int n_holes = 1;
  int length = 16;
};

// torchvision's RandomErasing: with probability p, a rectangle of area fraction in `scale` and
// aspect ratio in `ratio` (log-uniform; 10 tries, else nothing), placed uniformly, set to
// `value` per channel. `tensor_scale`: the value is in the scale of the tensor it is applied to
// (after ToTensor: [0, 1], or normalized values after Normalize), else in pixel values (0-255,
// on the uint8 image before ToTensor). `random_value` (value="random", tensor scale only): each
// erased value a standard normal drawn per pixel and channel instead (torchvision's normal_()).
// Comes after the geometric and colour transforms.
struct RandomErasing {
  double p = 0.5;
  std::array<double, 2> scale = {0.02, 0.33};
  std::array<double, 2> ratio = {0.3, 3.3};
  std::array<float, 3> value = {0.f, 0.f, 0.f};
  bool tensor_scale = true;
  bool random_value = false;
};

// DALI's grid_mask: zeroes a grid of squares. The plane is cut into tiles of side `tile` pixels
// (rotated by `angle` radians about the top-left pixel, then shifted by shift_x, shift_y pixels);
// in each tile a square of side ratio * tile is black. Before Normalize the pixels become 0; after it the output
// is 0 (as Cutout). Each of tile, angle, shift_x, shift_y is drawn uniformly per sample from its
// range (equal ends: fixed, DALI's arguments). Comes after the geometric and colour transforms.
struct GridMask {
  std::array<int, 2> tile = {100, 100};
  double ratio = 0.5;
  std::array<double, 2> angle = {0.0, 0.0};
  std::array<double, 2> shift_x = {0.0, 0.0};
  std::array<double, 2> shift_y = {0.0, 0.0};
};

// torchvision's GaussianNoise on the float tensor (after ToTensor): x + mean + sigma * N(0, 1)
// per element, clamped to [0, 1] when `clip`. Before Normalize it acts on [0, 1] values; after
// it, on normalized ones (and clip still means [0, 1], as torchvision). The noise comes from the
// loader's seed (a counter-based generator per element), not from torch's. The output dtype must
// be float. Comes after the geometric and colour transforms, before any erasing.
struct GaussianNoise {
  double mean = 0.0;
  double sigma = 0.1;
  bool clip = true;
};

// torchvision's RandomApply, as a marker in a flat list: with probability p the next `count`
// transforms are applied, otherwise none of them (their draws are skipped). They may not change
// the output size and may not be Normalize or user functions; a RandomApply among them counts
// as one, and its own transforms too. (sluice.transforms.RandomApply writes the marker before the
// transforms it holds.)
struct RandomApply {
  int count = 1;
  double p = 0.5;
};

// A user function run on each sample on the loader's CPU threads (torchvision's Lambda). It
// changes the sample in place: HWC uint8 pixels after the geometry and colour transforms
// (kPixels), or the finished sample in the loader's dtype and layout, after Normalize
// (kFinished). An error fails that sample (the loader names the file). Call may run on many
// threads at once. `seed` is a draw of the sample's (seed, epoch, sample index, position in the
// list) stream: the same for a sample whatever the thread, batch or device, for the function's
// own random draws (the Python Lambda seeds NumPy's and Python's global generators with it).
class SampleFunction {
 public:
  enum class Stage : uint8_t { kPixels, kFinished };
  virtual ~SampleFunction() = default;
  virtual Status Call(void* data, int height, int width, DType dtype, Layout layout, uint64_t seed) const = 0;
};

struct Lambda {
  std::shared_ptr<const SampleFunction> fn;
  SampleFunction::Stage stage = SampleFunction::Stage::kPixels;
  std::string name = "Lambda";  // for errors, e.g. "Lambda(Cutout)"
};

// (x / 255 - mean) / std per channel, on RGB values in [0, 255]. Output dtype must be float.
struct Normalize {
  std::array<float, 3> mean = {0.f, 0.f, 0.f};
  std::array<float, 3> std = {1.f, 1.f, 1.f};
};

// torchvision's RandomPerspective: with probability p, a perspective warp that moves each corner
// inward by up to distortion_scale times half the image's side (drawn per sample); points from
// outside the image get `fill`. Interpolation kBilinear (the default) or kNearest; the output has
// the input's size. Composed like RandomRotation.
struct RandomPerspective {
  double distortion_scale = 0.5;
  double p = 0.5;
  Interpolation interpolation = Interpolation::kBilinear;
  std::array<uint8_t, 3> fill = {0, 0, 0};
};

// torchvision's ElasticTransform: each pixel moved by a displacement drawn per sample (uniform
// noise blurred by a Gaussian of `sigma` (> 0, x and y), scaled by `alpha`); points from outside
// the image get `fill`. Interpolation kBilinear (the default) or kNearest. A filter on the
// resampled image (placed like GaussianBlur), computed on the CPU: with device="cuda", a list
// with it runs on the CPU threads and its batches are copied to the GPU.
struct ElasticTransform {
  std::array<double, 2> alpha = {50.0, 50.0};
  std::array<double, 2> sigma = {5.0, 5.0};
  Interpolation interpolation = Interpolation::kBilinear;
  std::array<uint8_t, 3> fill = {0, 0, 0};
};

// torchvision's AugMix: per sample, mixture_width chains of chain_depth ops (1 to 3 drawn when
// -1) from the auto-augment ops (all_ops: with brightness, color, contrast and sharpness) at a
// magnitude bin below `severity` (of 10), each applied to the image; the result is
// m0 * image + sum_i w_i * chain_i, m0 and w from Dirichlet(alpha) draws, truncated to uint8.
// A filter on the resampled image (placed like RandAugment), computed on the CPU threads (with
// device="cuda" a list with it runs there and its batches are copied to the GPU).
struct AugMix {
  static constexpr int kMaxChains = 4, kMaxDepth = 3;
  int severity = 3;
  int mixture_width = 3;
  int chain_depth = -1;
  double alpha = 1.0;
  bool all_ops = true;
  Interpolation interpolation = Interpolation::kBilinear;
  std::array<uint8_t, 3> fill = {0, 0, 0};
  bool has_fill = false;  // false: torchvision's fill=None (warps blend with zero padding, unmasked)
};

// Per-sample containers, as markers followed by the transforms they hold (sluice.transforms
// compiles RandomChoice and RandomOrder of per-sample transforms into these):
//   RandomChoice: one of the num_options ChoiceOption ranges that follow, option k with weight
//     p[k] (weights > 0; equal when all are 0);
//   ChoiceOption: one option, the `count` transforms after it, drawn only when chosen;
//   RandomOrder: the num_items OrderItem ranges that follow, all drawn, in an order drawn per
//     sample (colour transforms and filters only);
//   OrderItem: one item, the `count` transforms after it.
// Like RandomApply's, an option's or item's transforms keep the output size.
struct RandomChoice {
  static constexpr int kMaxOptions = 8;
  int num_options = 0;
  std::array<double, kMaxOptions> p = {};
};
struct ChoiceOption {
  int count = 0;
};
struct RandomOrder {
  static constexpr int kMaxItems = 8;
  int num_items = 0;
};
struct OrderItem {
  int count = 0;
};

using Transform = std::variant<RandomResizedCrop, Resize, CenterCrop, RandomCrop, RandomHorizontalFlip,
                               RandomVerticalFlip, Pad, RandomRotation, RandomAffine, ColorJitter,
                               RandomGrayscale, GaussianBlur, RandAugment, TrivialAugmentWide, Cutout,
                               RandomErasing, GridMask, GaussianNoise, Normalize, Lambda, RandomSolarize,
                               RandomInvert, RandomPosterize, RandomAutocontrast, RandomEqualize,
                               RandomAdjustSharpness, RandomApply, AutoAugment, RandomChannelPermutation,
                               RandomPhotometricDistort, RandomResize, RandomShortestSize, ScaleJitter,
                               RandomZoomOut, RandomChoice, ChoiceOption, RandomOrder, OrderItem,
                               RandomPerspective, ElasticTransform, AugMix>;

// The torchvision class name of a transform, e.g. "RandomResizedCrop".
const char* TransformName(const Transform& t);

// Checks one transform's arguments. Errors name the transform and the argument.
Status Validate(const Transform& t);

}  // namespace sluice::transforms

#endif  // SLUICE_TRANSFORMS_H_
