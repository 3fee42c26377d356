// Plan: a transform list compiled for execution.
//
// The geometric transforms (crops, resizes, flips, padding) of a list are composed per sample
// into as few resampling passes ("segments") as exact semantics allow: a chain such as
// RandomResizedCrop + flip, or Resize + CenterCrop, is one pass over just the decoded region.
// A second resize after a resize, or a resize after padding, starts a new segment (torchvision
// materializes those intermediates too, and so must we to give the same pixels).
// A rotation or affine warp (RandomRotation, RandomAffine) joins the segment it follows: the
// segment then resamples to the image the warp is given, the warp reads that image, and the
// crops, padding and flips after the warp become a window on the warped image; the GPU computes
// all of it in one pass, evaluating the resampled pixels the warp reads where it reads them.
// Colour transforms (ColorJitter, RandomGrayscale) become per-sample colour steps that run on
// the resampled image, before the finish step; they must follow the crops, resizes and padding
// of the list (flips may come after them), as contrast depends on the whole image it is given.
// Pixel-stage filters (GaussianBlur; RandAugment and TrivialAugmentWide, whose ops are colour
// steps or filters) follow the same placement rule and interleave with the colour steps in list
// order; flips may follow a blur, not an auto-augment (its shears do not commute with flips).
// Erasing (Cutout) comes after the geometric and colour transforms and runs in the finish.
// Per-pixel work after geometry (normalize, cast, layout) is one "finish" step. User functions
// (Lambda) run on the CPU, after the colour steps or after the finish step, and must come after
// every geometric and colour transform. A list that
// does not end in a fixed size (Resize(256) alone, or no geometry at all) is valid: each sample
// then has its own output size.
//
// Thread-safety: a Plan is immutable after Create(); Draw() may run on many threads at once.
#ifndef SLUICE_PIPELINE_PLAN_H_
#define SLUICE_PIPELINE_PLAN_H_

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "kernels/color/color_params.h"
#include "kernels/erase/erase_params.h"
#include "kernels/filter/filter_params.h"
#include "kernels/noise/noise_params.h"
#include "kernels/resize/resize_params.h"
#include "kernels/warp/warp_params.h"
#include "sluice/status.h"
#include "sluice/transforms.h"

namespace sluice {

// The random stream identity of one sample.
struct SampleKey {
  uint64_t seed = 0;
  uint64_t epoch = 0;
  uint64_t sample = 0;  // index in the dataset
};

// The filters (blur, sharpness, whole-image warps) among a sample's colour steps, in list order:
// colour steps before[k], then filters[k], for each k; SampleGeometry::color runs after the last.
struct PixelPasses {
  static constexpr int kMax = 4;
  ColorOps before[kMax];
  FilterStep filters[kMax];
  int num = 0;
};

// Per-sample draw: the geometry (segment 0 reads the full-resolution image in display
// orientation; each next segment reads the previous one's output), then the pixel passes and
// colour steps that run on the last segment's output. A segment resamples with segments[i]; when warps[i] is
// enabled, that gives the image the warp reads, and the segment's output is the warp's window.
struct SampleGeometry {
  static constexpr int kMaxSegments = 4;
  std::array<ResizeParams, kMaxSegments> segments;
  std::array<WarpParams, kMaxSegments> warps;
  int num_segments = 0;
  PixelPasses passes;  // on the last segment's output
  ColorOps color;      // after the passes
  EraseOps erase;  // on the last segment's output, after the colour steps
  NoiseParams noise;  // GaussianNoise, in the finish

  // Output size of segment i.
  int out_width(int i) const {
    const size_t k = static_cast<size_t>(i);
    return warps[k].enabled ? warps[k].x.len : segments[k].x.out_len;
  }
  int out_height(int i) const {
    const size_t k = static_cast<size_t>(i);
    return warps[k].enabled ? warps[k].y.len : segments[k].y.out_len;
  }
};

class Plan {
 public:
  static Result<Plan> Create(std::vector<transforms::Transform> transforms);

  // Draws this sample's parameters for an image of display size width x height.
  // Fails (InvalidArgument) when the image cannot go through the list (e.g. smaller than a
  // RandomCrop without pad_if_needed).
  Status Draw(int width, int height, const SampleKey& key, SampleGeometry* out) const;

  // Whether every sample comes out out_height() x out_width() (else the size depends on the
  // image, and the loader batches samples as a TensorList).
  bool fixed_size() const { return out_height_ > 0; }
  int out_height() const { return out_height_; }
  int out_width() const { return out_width_; }
  const std::optional<transforms::Normalize>& normalize() const { return normalize_; }
  // Whether the list has colour or filter transforms (samples may then carry colour steps).
  bool has_color() const { return has_color_; }
  // The most filters a sample can carry (GaussianBlur, RandAugment's sharpness and warps).
  int max_filters() const { return max_filters_; }
  // Whether the list has rotations or affine warps (segments may then carry warps).
  bool has_warp() const { return has_warp_; }
  // Whether the list erases (samples may then carry erased rectangles or a grid mask).
  bool has_erase() const { return has_erase_; }
  // Whether the list has GridMask (samples then carry a grid) and GaussianNoise.
  bool has_grid() const { return has_grid_; }
  bool has_noise() const { return has_noise_; }
  // User functions (Lambda), in list order: on the pixels after the colour steps, and on the
  // finished sample. Only the CPU path runs them.
  const std::vector<transforms::Lambda>& pixel_functions() const { return pixel_fns_; }
  const std::vector<transforms::Lambda>& finished_functions() const { return finished_fns_; }
  bool has_functions() const { return !pixel_fns_.empty() || !finished_fns_.empty(); }
  const std::vector<transforms::Transform>& transforms() const { return transforms_; }

 private:
  std::vector<transforms::Transform> transforms_;
  std::optional<transforms::Normalize> normalize_;
  bool has_color_ = false;
  bool has_warp_ = false;
  bool has_erase_ = false;
  bool has_grid_ = false;
  bool has_noise_ = false;
  int max_filters_ = 0;
  std::vector<transforms::Lambda> pixel_fns_, finished_fns_;
  int out_height_ = 0, out_width_ = 0;  // 0: depends on the image
};

}  // namespace sluice

#endif  // SLUICE_PIPELINE_PLAN_H_
