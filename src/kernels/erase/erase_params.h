// Per-sample erased rectangles (Cutout, RandomErasing) and their per-pixel rule, shared by the
// CPU and the GPU finish. A pixel-stage rectangle sets the RGB8 pixel to `pixel` (then the finish
// scales and normalizes it, as torchvision would the erased uint8 image); a finished-stage one
// sets the finished output to `value` (Cutout after Normalize: 0, as the reference Cutout
// multiplies the normalized tensor by its mask; RandomErasing on a tensor: its value, normalized
// on the host when a Normalize follows). Later rectangles win where they overlap.
//
// Thread-safety: plain values and pure functions.
#ifndef SLUICE_KERNELS_ERASE_ERASE_PARAMS_H_
#define SLUICE_KERNELS_ERASE_ERASE_PARAMS_H_

#include <cstdint>

#include "core/hd.h"

namespace sluice {

struct EraseRect {
  int x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // [x0, x1) x [y0, y1); may be empty
  bool finished = false;               // sets the finished output (else the pixel)
  uint8_t pixel[3] = {0, 0, 0};        // pixel stage: the RGB8 value
  float value[3] = {0.f, 0.f, 0.f};    // finished stage: the output value per channel
};

struct EraseOps {
  static constexpr int kMaxRects = 16;
  EraseRect rects[kMaxRects];
  int num = 0;
};

// Applies the pixel-stage rectangles that cover (x, y) to px; returns the last finished-stage
// one that covers it (its value is then the output), or null.
SLUICE_HD const EraseRect* ErasePixel(const EraseOps& ops, int x, int y, uint8_t px[3]) {
  const EraseRect* out = nullptr;
  for (int i = 0; i < ops.num; ++i) {
    const EraseRect& r = ops.rects[i];
    if (x < r.x0 || x >= r.x1 || y < r.y0 || y >= r.y1) continue;
    if (r.finished) {
      out = &r;
    } else {
      px[0] = r.pixel[0], px[1] = r.pixel[1], px[2] = r.pixel[2];
    }
  }
  return out;
}

// A finished-stage value written into a uint8 output (as torch casts a float: truncation).
SLUICE_HD uint8_t ErasedU8(float v) { return static_cast<uint8_t>(v < 0.f ? 0.f : (v > 255.f ? 255.f : v)); }

}  // namespace sluice

#endif  // SLUICE_KERNELS_ERASE_ERASE_PARAMS_H_
