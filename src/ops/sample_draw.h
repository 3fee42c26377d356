// SampleDraw: one sample's random parameters being drawn, op after op, into a SampleGeometry.
//
// Plan::Draw makes one per sample and hands it to each op's draw function in list order
// (BeginOp(i) before op i; rng() is then that op's stream). Ops describe what they do to the image
// the list has produced so far, and SampleDraw composes it:
// - Geometry (crop windows, resizes, flips, padding) is composed per axis into as few resampling
//   passes ("segments") as exact semantics allow: RandomResizedCrop + flip, or Resize +
//   CenterCrop, is one pass over just the decoded region. A resize after a resize, or after
//   padding, starts a new segment (torchvision materializes those intermediates too, and so must
//   we to give the same pixels).
// - A warp (RandomRotation, RandomAffine) joins the segment it follows: the segment resamples to
//   the image the warp is given, and the crops, padding and flips after the warp become a window
//   on the warped image.
// - Colour steps and filters run on the last segment's output, in list order (PixelPasses).
// - Erasing and noise are parameters of the finish step.
//
//   SampleGeometry g;
//   SampleDraw d(640, 480, key, normalize, &g);
//   d.BeginOp(0);
//   SLUICE_RETURN_IF_ERROR(d.Resize(256, 192, Interpolation::kBilinear, true));
//   SLUICE_RETURN_IF_ERROR(d.Finish());   // g now holds one segment
//
// Thread-safety: a value used by one thread. `out` must outlive it.
#ifndef SLUICE_OPS_SAMPLE_DRAW_H_
#define SLUICE_OPS_SAMPLE_DRAW_H_

#include <array>
#include <cstdint>
#include <optional>
#include <utility>

#include "core/image_view.h"
#include "core/rng.h"
#include "kernels/warp/affine_matrix.h"
#include "ops/sample_geometry.h"
#include "sluice/status.h"
#include "sluice/transforms.h"

namespace sluice {

// A window placed on one axis of an image of length `len`: start may be negative and
// start + size may exceed len (the outside is padding).
struct AxisWindow {
  int start = 0;
  int size = 0;
};

class SampleDraw {
 public:
  // A width x height image (display orientation); `normalize`: the list's Normalize, if any.
  SampleDraw(int width, int height, const SampleKey& key, const std::optional<transforms::Normalize>& normalize,
             SampleGeometry* out);

  // Op `index` of the list draws next, from its own stream.
  void BeginOp(uint32_t index);
  SampleRng& rng() { return rng_; }
  const SampleKey& key() const { return key_; }
  uint32_t op_index() const { return op_; }

  // The size of the image the current op is given.
  int width() const { return warp_.enabled ? warp_.x.len : x_.len(); }
  int height() const { return warp_.enabled ? warp_.y.len : y_.len(); }

  // A crop window on the current image; one reaching outside it pads with `fill`, or with the
  // image's own pixels in `mode` (edge, reflect, symmetric).
  Status Crop(const AxisWindow& x, const AxisWindow& y, const std::array<uint8_t, 3>& fill,
              transforms::PaddingMode mode = transforms::PaddingMode::kConstant);
  // Crops `window` of the current image and resizes it to width x height (RandomResizedCrop).
  Status ResizedCrop(const Rect& window, int width, int height, transforms::Interpolation interpolation,
                     bool antialias);
  Status Resize(int width, int height, transforms::Interpolation interpolation, bool antialias);
  void FlipX();
  void FlipY();
  // An affine warp of the current image about its centre, or `center` (x, y) when not null; with
  // `expand`, the warped image is the bounding box of the warped one (rotate's expand=True).
  Status Warp(const AffineParams& affine, transforms::Interpolation interpolation, const std::array<uint8_t, 3>& fill,
              const double* center, bool expand = false);
  // A perspective warp of the current image with torchvision's coefficients (RandomPerspective).
  Status Perspective(const float coefficients[8], transforms::Interpolation interpolation,
                     const std::array<uint8_t, 3>& fill);

  // A colour step with its factor as torchvision computes it, after the pixel steps so far.
  void AddColor(ColorKind kind, double factor);
  // A filter after the pixel steps so far.
  void AddFilter(const FilterStep& filter);

  // The next `count` ops of the list draw nothing (a RandomApply not applied); Plan::Draw takes it.
  void Skip(int count) { skip_ = count; }
  int TakeSkip() { return std::exchange(skip_, 0); }
  // A RandomChoice drew option `chosen` of `options`; each ChoiceOption asks whether it is the
  // one (the last closes the choice). Unsupported past kMaxNesting choices inside each other.
  Status OpenChoice(int chosen, int options);
  bool NextOptionChosen();
  // A RandomOrder drew the order of its `n` items (perm[k]: the item drawn k-th); Plan::Draw
  // takes it and draws the items in that order.
  void Order(const int* perm, int n);
  int TakeOrder(int* perm);

  EraseOps& erase() { return out_->erase; }
  AugMixDraw& augmix() { return out_->augmix; }
  NoiseParams& noise() { return out_->noise; }
  // Whether a Normalize came before the current op, and the list's Normalize.
  bool normalized() const { return normalized_; }
  void SetNormalized() { normalized_ = true; }
  const std::optional<transforms::Normalize>& normalize() const { return normalize_; }

  // Closes the last segment. Fails (Unsupported) when the list needs more segments than
  // SampleGeometry holds.
  Status Finish() { return FinishSegment(); }

 private:
  // One axis of the image as the transforms see it, against the current segment's input.
  struct Axis {
    AxisMap map;
    bool resized = false;  // a real resize happened in this segment
    bool padded = false;   // the window reaches outside the resized image
    static Axis Identity(int len);
    int len() const { return map.out_len; }
    // The current image is the segment's whole resized image (what a mirrored padding reflects).
    bool Whole() const { return !padded && map.out_off == 0 && map.out_len == map.resized_len; }
    void Window(int start, int size);
    void ResizeTo(int new_len);  // REQUIRES: !resized && !padded.
  };

  Status FinishSegment();
  Status BeginWarp(transforms::Interpolation interpolation, const std::array<uint8_t, 3>& fill);
  bool Pending() const { return x_.resized || y_.resized || x_.padded || y_.padded || warp_.enabled; }

  SampleKey key_;
  std::optional<transforms::Normalize> normalize_;
  SampleGeometry* out_;
  SampleRng rng_{0, 0, 0, 0};
  uint32_t op_ = 0;
  Axis x_, y_;
  Filter filter_ = Filter::kBilinear;
  bool antialias_ = true;
  std::array<uint8_t, 3> fill_ = {0, 0, 0};
  bool fill_set_ = false;       // the current segment pads with fill_
  WarpParams warp_;             // the current segment's warp, when enabled
  bool warp_fill_set_ = false;  // its window pads with warp_.pad_fill
  bool normalized_ = false;
  int skip_ = 0;
  static constexpr int kMaxNesting = 8;
  struct Choice {
    int chosen, next, options;
  };
  Choice choices_[kMaxNesting];
  int num_choices_ = 0;
  int order_[transforms::RandomOrder::kMaxItems];
  int order_n_ = 0;
};

}  // namespace sluice

#endif  // SLUICE_OPS_SAMPLE_DRAW_H_
