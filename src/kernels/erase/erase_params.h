// Per-sample erased rectangles (Cutout, RandomErasing) and grid (GridMask), and their per-pixel
// rule, shared by the CPU and the GPU finish. A pixel-stage rectangle sets the RGB8 pixel to `pixel` (then the finish
// scales and normalizes it, as torchvision would the erased uint8 image); a finished-stage one
// sets the finished output to `value` (Cutout after Normalize: 0, as the reference Cutout
// multiplies the normalized tensor by its mask; RandomErasing on a tensor: its value, normalized
// on the host when a Normalize follows). Later rectangles win where they overlap, and the grid
// wins over the rectangles. The grid is DALI's grid_mask: pixel (x, y) is black when both
// frac(u) and frac(v) are below `ratio`, with u = (x cos a - y sin a - shift_x) / tile and
// v = (x sin a + y cos a - shift_y) / tile, computed as DALI's CPU kernel does, in float32 with
// the factors cos(a) / tile, sin(a) / tile, shift / tile (no fused multiply-add).
//
// Thread-safety: plain values and pure functions.
#ifndef SLUICE_KERNELS_ERASE_ERASE_PARAMS_H_
#define SLUICE_KERNELS_ERASE_ERASE_PARAMS_H_

#include <cmath>
#include <cstdint>

#include "core/hd.h"

namespace sluice {

struct EraseRect {
  int x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // [x0, x1) x [y0, y1); may be empty
  bool finished = false;               // sets the finished output (else the pixel)
  uint8_t pixel[3] = {0, 0, 0};        // pixel stage: the RGB8 value
  float value[3] = {0.f, 0.f, 0.f};    // finished stage: the output value per channel
};

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

// Applies the pixel-stage rectangles and grid that cover (x, y) to px; returns the finished-stage
// value (3 floats) of the last finished rectangle or grid that covers it, or null.
SLUICE_HD const float* ErasePixel(const EraseOps& ops, int x, int y, uint8_t px[3]) {
  const float* out = nullptr;
  for (int i = 0; i < ops.num; ++i) {
    const EraseRect& r = ops.rects[i];
    if (x < r.x0 || x >= r.x1 || y < r.y0 || y >= r.y1) continue;
    if (r.finished) {
      out = r.value;
    } else {
      px[0] = r.pixel[0], px[1] = r.pixel[1], px[2] = r.pixel[2];
    }
  }
  if (ops.grid.enabled && GridBlack(ops.grid, x, y)) {
    if (ops.grid.finished) {
      out = ops.grid.value;
    } else {
      px[0] = px[1] = px[2] = 0;
    }
  }
  return out;
}

// A finished-stage value written into a uint8 output (as torch casts a float: truncation).
SLUICE_HD uint8_t ErasedU8(float v) { return static_cast<uint8_t>(v < 0.f ? 0.f : (v > 255.f ? 255.f : v)); }

}  // namespace sluice

#endif  // SLUICE_KERNELS_ERASE_ERASE_PARAMS_H_
