// Plan: a transform list compiled for execution.
//
// Create() walks the list through the op table (src/ops/): each op's arguments are checked, its
// placement checked against what came before it (ListState: its kind's rules, then its own), and
// what the list implies is recorded: the output size, the Normalize, what a sample may carry.
// Draw() then draws one sample's parameters, op by op, into a SampleGeometry (SampleDraw composes
// the geometry into as few resampling passes as exact semantics allow). Per-pixel work after
// geometry (normalize, cast, layout) is one "finish" step. User functions (Lambda) run on the CPU,
// after the colour steps or after the finish step. A list that does not end in a fixed size
// (Resize(256) alone, or no geometry at all) is valid: each sample then has its own output size.
//
// Thread-safety: a Plan is immutable after Create(); Draw() may run on many threads at once.
#ifndef SLUICE_PIPELINE_PLAN_H_
#define SLUICE_PIPELINE_PLAN_H_

#include <optional>
#include <vector>

#include "kernels/finish/finish_params.h"
#include "ops/list_rules.h"
#include "ops/sample_draw.h"
#include "ops/sample_geometry.h"
#include "sluice/status.h"
#include "sluice/transforms.h"

namespace sluice {

class Plan {
 public:
  static Result<Plan> Create(std::vector<transforms::Transform> transforms);

  // Draws this sample's parameters for an image of display size width x height.
  // Fails (InvalidArgument) when the image cannot go through the list (e.g. smaller than a
  // RandomCrop without pad_if_needed).
  Status Draw(int width, int height, const SampleKey& key, SampleGeometry* out) const;

  // Whether every sample comes out out_height() x out_width() (else the size depends on the
  // image, and the loader batches samples as a TensorList).
  bool fixed_size() const { return list_.out_height > 0 && list_.out_width > 0; }
  int out_height() const { return fixed_size() ? list_.out_height : 0; }
  int out_width() const { return fixed_size() ? list_.out_width : 0; }
  const std::optional<transforms::Normalize>& normalize() const { return list_.normalize; }
  // Whether the list has colour or filter transforms (samples may then carry colour steps).
  bool has_color() const { return list_.has_color; }
  // The most filters a sample can carry (GaussianBlur, RandAugment's sharpness and warps).
  int max_filters() const { return list_.max_filters; }
  // Whether the list has rotations or affine warps (segments may then carry warps).
  bool has_warp() const { return list_.has_warp; }
  // Whether the list erases (samples may then carry erased rectangles or a grid mask).
  bool has_erase() const { return list_.has_erase; }
  // Whether the list has GridMask (samples then carry a grid) and GaussianNoise.
  bool has_grid() const { return list_.has_grid; }
  bool has_noise() const { return list_.has_noise; }
  // User functions (Lambda), in list order: on the pixels after the colour steps, and on the
  // finished sample. Only the CPU path runs them.
  const std::vector<PlacedFunction>& pixel_functions() const { return list_.pixel_fns; }
  const std::vector<PlacedFunction>& finished_functions() const { return list_.finished_fns; }
  bool has_functions() const { return !list_.pixel_fns.empty() || !list_.finished_fns.empty(); }
  const char* cpu_only() const { return list_.cpu_only; }  // a transform only the CPU path runs, or null
  const std::vector<transforms::Transform>& transforms() const { return transforms_; }

 private:
  Status DrawRange(size_t begin, size_t end, SampleDraw* draw) const;

  std::vector<transforms::Transform> transforms_;
  ListState list_;
};

// The finish step's parameters: the plan's Normalize, the output's dtype and layout.
FinishParams MakeFinishParams(const Plan& plan, DType dtype, Layout layout);

}  // namespace sluice

#endif  // SLUICE_PIPELINE_PLAN_H_
