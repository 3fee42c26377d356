// SampleGeometry: everything drawn for one sample, as the kernels take it: the resampling
// segments (each a resize, maybe followed by a warp), the pixel passes and colour steps on the
// last segment's output, and the finish step's erasing and noise. SampleKey: the random stream
// identity of one sample.
//
// Thread-safety: plain values.
#ifndef SLUICE_OPS_SAMPLE_GEOMETRY_H_
#define SLUICE_OPS_SAMPLE_GEOMETRY_H_

#include <array>
#include <cstddef>
#include <cstdint>

#include "kernels/color/color_params.h"
#include "kernels/erase/erase_params.h"
#include "kernels/filter/filter_params.h"
#include "kernels/noise/noise_params.h"
#include "kernels/resize/resize_params.h"
#include "kernels/warp/warp_params.h"
#include "ops/augment_draw.h"

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
  static constexpr int kMax = 8;
  ColorOps before[kMax];
  FilterStep filters[kMax];
  int num = 0;
};

// Segment 0 reads the full-resolution image in display orientation; each next segment reads the
// previous one's output. A segment resamples with segments[i]; when warps[i] is enabled, that
// gives the image the warp reads, and the segment's output is the warp's window.
struct SampleGeometry {
  static constexpr int kMaxSegments = 4;
  std::array<ResizeParams, kMaxSegments> segments;
  std::array<WarpParams, kMaxSegments> warps;
  int num_segments = 0;
  PixelPasses passes;  // on the last segment's output
  ColorOps color;      // after the passes
  EraseOps erase;      // on the last segment's output, after the colour steps
  NoiseParams noise;   // GaussianNoise, in the finish
  AugMixDraw augmix;   // the list's AugMix (a kAugMix filter in passes marks its place)

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

}  // namespace sluice

#endif  // SLUICE_OPS_SAMPLE_GEOMETRY_H_
