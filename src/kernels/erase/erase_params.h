// Per-sample erased rectangles (Cutout) and their per-pixel rule, shared by the CPU and the GPU
// finish. A rectangle erased before Normalize sets the pixel to 0 (then the finish scales and
// normalizes it, as torchvision would the zeroed tensor); one erased after Normalize sets the
// finished output to 0, as the reference Cutout multiplies the normalized tensor by its mask.
//
// Thread-safety: plain values and pure functions.
#ifndef SLUICE_KERNELS_ERASE_ERASE_PARAMS_H_
#define SLUICE_KERNELS_ERASE_ERASE_PARAMS_H_

#include <cstdint>

#include "core/hd.h"

namespace sluice {

struct EraseRect {
  int x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // [x0, x1) x [y0, y1); may be empty
  bool finished = false;               // after Normalize: the output is 0
};

struct EraseOps {
  static constexpr int kMaxRects = 16;
  EraseRect rects[kMaxRects];
  int num = 0;
};

// Applies the rectangles that cover (x, y): pixel-stage ones zero px; returns whether a
// finished-stage one covers it (the output is then 0).
SLUICE_HD bool ErasePixel(const EraseOps& ops, int x, int y, uint8_t px[3]) {
  bool zero_output = false;
  for (int i = 0; i < ops.num; ++i) {
    const EraseRect& r = ops.rects[i];
    if (x < r.x0 || x >= r.x1 || y < r.y0 || y >= r.y1) continue;
    if (r.finished) {
      zero_output = true;
    } else {
      px[0] = px[1] = px[2] = 0;
    }
  }
  return zero_output;
}

}  // namespace sluice

#endif  // SLUICE_KERNELS_ERASE_ERASE_PARAMS_H_
