#include "kernels/erase/erase_cpu.h"

#include <algorithm>
#include <cstring>

#include "kernels/normalize/normalize_params.h"

namespace sluice {

namespace {

// The rectangle clipped to an h x w image; false when empty.
bool Clip(const EraseRect& r, int h, int w, EraseRect* out) {
  *out = r;
  out->x0 = std::max(r.x0, 0), out->y0 = std::max(r.y0, 0);
  out->x1 = std::min(r.x1, w), out->y1 = std::min(r.y1, h);
  return out->x0 < out->x1 && out->y0 < out->y1;
}

}  // namespace

void ErasePixelsCpu(const EraseOps& ops, const MutableImageView& img) {
  for (int i = 0; i < ops.num; ++i) {
    EraseRect r;
    if (ops.rects[i].finished || !Clip(ops.rects[i], img.height, img.width, &r)) continue;
    for (int y = r.y0; y < r.y1; ++y)
      std::memset(img.row(y) + 3 * r.x0, 0, static_cast<size_t>(r.x1 - r.x0) * 3);
  }
}

void EraseFinishedCpu(const EraseOps& ops, void* sample, int h, int w, DType dtype, Layout layout) {
  const size_t es = DTypeSize(dtype);  // 0 is all-zero bytes in every dtype
  auto* out = static_cast<uint8_t*>(sample);
  for (int i = 0; i < ops.num; ++i) {
    EraseRect r;
    if (!ops.rects[i].finished || !Clip(ops.rects[i], h, w, &r)) continue;
    for (int y = r.y0; y < r.y1; ++y) {
      if (layout == Layout::kNHWC) {
        std::memset(out + static_cast<size_t>(SlotOffset(layout, h, w, 0, y, r.x0)) * es, 0,
                    static_cast<size_t>(r.x1 - r.x0) * 3 * es);
      } else {
        for (int c = 0; c < 3; ++c)
          std::memset(out + static_cast<size_t>(SlotOffset(layout, h, w, c, y, r.x0)) * es, 0,
                      static_cast<size_t>(r.x1 - r.x0) * es);
      }
    }
  }
}

}  // namespace sluice
