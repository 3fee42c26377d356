// Per-sample erased rectangles (Cutout, RandomErasing) and grid (GridMask), and their per-pixel
// rule, shared by the CPU and the GPU finish. A pixel-stage rectangle sets the RGB8 pixel to `pixel` (then the finish
// scales and normalizes it, as torchvision would the erased uint8 image); a finished-stage one
// sets the finished output to `value` (Cutout after Normalize: 0, as the reference Cutout
// multiplies the normalized tensor by its mask; RandomErasing on a tensor: its value, normalized
// on the host when a Normalize follows). Later rectangles win where they overlap, and the grid
// wins over the rectangles. The grid is DALI's grid_mask: pixel (x, y) is black when both
// frac(u) and frac(v) are below `ratio`, with u = (x cos a - y sin a - shift_x) / tile and
// v = (x sin a + y cos a - shift_y) / tile, computed as DALI's CPU kernel does, in float32 with
// the factors cos(a) / tile, sin(a) / tile, shift / tile (no fused multiply-add). A `random`
// finished rectangle (RandomErasing(value="random")) sets each output value to z * scale + value,
// z a standard normal of its own stream per pixel and channel (StandardNormals3 at the pixel's
// row-major index): torchvision's normal_() values, normalized when a Normalize follows.
//
// Thread-safety: plain values and pure functions.
#ifndef SLUICE_KERNELS_ERASE_ERASE_PARAMS_H_
#define SLUICE_KERNELS_ERASE_ERASE_PARAMS_H_

#include <cmath>
#include <cstdint>

#include "core/hd.h"
#include "core/normals.h"

namespace sluice {

struct EraseRect {
  int x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // [x0, x1) x [y0, y1); may be empty
  bool finished = false;               // sets the finished output (else the pixel)
  uint8_t pixel[3] = {0, 0, 0};        // pixel stage: the RGB8 value
  float value[3] = {0.f, 0.f, 0.f};    // finished stage: the output value per channel
  bool random = false;                 // finished stage: z * scale + value, z drawn per element
  float scale[3] = {1.f, 1.f, 1.f};
  StreamKey key;                       // random: the normals' stream
};

// Finished-stage value of rectangle r at pixel `pixel` (row-major index), channels into v.
SLUICE_HD void ErasedValue(const EraseRect& r, int64_t pixel, float v[3]) {
  if (!r.random) {
    v[0] = r.value[0], v[1] = r.value[1], v[2] = r.value[2];
    return;
  }
  float z[3];
  StandardNormals3(r.key, pixel, z);
  for (int c = 0; c < 3; ++c) v[c] = hd::Add(hd::Mul(z[c], r.scale[c]), r.value[c]);
}

struct GridParams {
  bool enabled = false;
  bool finished = false;  // sets the finished output to 0 (else the pixel)
  float ca = 0.f, sa = 0.f;  // cos(angle) / tile, sin(angle) / tile
  float sx = 0.f, sy = 0.f;  // shift_x / tile, shift_y / tile
  float ratio = 0.f;
  float value[3] = {0.f, 0.f, 0.f};  // the finished output where black
};

struct EraseOps {
  static constexpr int kMaxRects = 16;
  EraseRect rects[kMaxRects];
  int num = 0;
  GridParams grid;
};

// Whether the grid blacks out pixel (x, y).
SLUICE_HD bool GridBlack(const GridParams& g, int x, int y) {
  using hd::Add;
  using hd::Mul;
  const float fx = static_cast<float>(x), fy = static_cast<float>(y);
  const float fxy = Add(-g.sx, Mul(fy, -g.sa)), fyy = Add(-g.sy, Mul(fy, g.ca));
  const float u = Add(fxy, Mul(fx, g.ca)), v = Add(fyy, Mul(fx, g.sa));
  return !(u - floorf(u) >= g.ratio || v - floorf(v) >= g.ratio);
}

// Applies the pixel-stage rectangles and grid that cover (x, y) of a w-wide image to px; writes
// the finished-stage value of the last finished rectangle or grid that covers it into out and
// returns true, or returns false when none does.
SLUICE_HD bool ErasePixel(const EraseOps& ops, int x, int y, int w, uint8_t px[3], float out[3]) {
  const EraseRect* last = nullptr;
  for (int i = 0; i < ops.num; ++i) {
    const EraseRect& r = ops.rects[i];
    if (x < r.x0 || x >= r.x1 || y < r.y0 || y >= r.y1) continue;
    if (r.finished) {
      last = &r;
    } else {
      px[0] = r.pixel[0], px[1] = r.pixel[1], px[2] = r.pixel[2];
    }
  }
  if (ops.grid.enabled && GridBlack(ops.grid, x, y)) {
    if (ops.grid.finished) {
      out[0] = ops.grid.value[0], out[1] = ops.grid.value[1], out[2] = ops.grid.value[2];
      return true;
    }
    px[0] = px[1] = px[2] = 0;
  }
  if (last == nullptr) return false;
  ErasedValue(*last, static_cast<int64_t>(y) * w + x, out);
  return true;
}

// A finished-stage value written into a uint8 output (as torch casts a float: truncation).
SLUICE_HD uint8_t ErasedU8(float v) { return static_cast<uint8_t>(v < 0.f ? 0.f : (v > 255.f ? 255.f : v)); }

}  // namespace sluice

#endif  // SLUICE_KERNELS_ERASE_ERASE_PARAMS_H_
