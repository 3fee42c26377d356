#include "kernels/erase/erase_cpu.h"

#include <algorithm>

#include "core/half.h"
#include "core/slot.h"

namespace sluice {

namespace {

// The rectangle clipped to an h x w image; false when empty.
bool Clip(const EraseRect& r, int h, int w, EraseRect* out) {
  *out = r;
  out->x0 = std::max(r.x0, 0), out->y0 = std::max(r.y0, 0);
  out->x1 = std::min(r.x1, w), out->y1 = std::min(r.y1, h);
  return out->x0 < out->x1 && out->y0 < out->y1;
}

template <typename T>
void Fill(const EraseRect& r, const T value[3], T* out, int h, int w, Layout layout) {
  for (int y = r.y0; y < r.y1; ++y)
    for (int c = 0; c < 3; ++c)
      for (int x = r.x0; x < r.x1; ++x) out[SlotOffset(layout, h, w, c, y, x)] = value[c];
}

// A finished rectangle's values, per pixel where it is random, cast as the output's dtype.
void FillFinished(const EraseRect& r, void* sample, int h, int w, DType dtype, Layout layout) {
  for (int y = r.y0; y < r.y1; ++y)
    for (int x = r.x0; x < r.x1; ++x) {
      float v[3];
      ErasedValue(r, static_cast<int64_t>(y) * w + x, v);
      for (int c = 0; c < 3; ++c) {
        const int64_t o = SlotOffset(layout, h, w, c, y, x);
        if (dtype == DType::kFloat32) static_cast<float*>(sample)[o] = v[c];
        else if (dtype == DType::kFloat16) static_cast<uint16_t*>(sample)[o] = FloatToHalfBits(v[c]);
        else static_cast<uint8_t*>(sample)[o] = ErasedU8(v[c]);
      }
    }
}

}  // namespace

void ErasePixelsCpu(const EraseOps& ops, const MutableImageView& img) {
  for (int i = 0; i < ops.num; ++i) {
    EraseRect r;
    if (ops.rects[i].finished || !Clip(ops.rects[i], img.height, img.width, &r)) continue;
    for (int y = r.y0; y < r.y1; ++y)
      for (int x = r.x0; x < r.x1; ++x) std::copy(r.pixel, r.pixel + 3, img.row(y) + 3 * x);
  }
  if (!ops.grid.enabled || ops.grid.finished) return;
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x)
      if (GridBlack(ops.grid, x, y)) std::fill(img.row(y) + 3 * x, img.row(y) + 3 * x + 3, uint8_t{0});
}

void EraseFinishedCpu(const EraseOps& ops, void* sample, int h, int w, DType dtype, Layout layout) {
  for (int i = 0; i < ops.num; ++i) {
    EraseRect r;
    if (!ops.rects[i].finished || !Clip(ops.rects[i], h, w, &r)) continue;
    if (r.random) {
      FillFinished(r, sample, h, w, dtype, layout);
    } else if (dtype == DType::kFloat32) {
      Fill(r, r.value, static_cast<float*>(sample), h, w, layout);
    } else if (dtype == DType::kFloat16) {
      const uint16_t v[3] = {FloatToHalfBits(r.value[0]), FloatToHalfBits(r.value[1]), FloatToHalfBits(r.value[2])};
      Fill(r, v, static_cast<uint16_t*>(sample), h, w, layout);
    } else {
      const uint8_t v[3] = {ErasedU8(r.value[0]), ErasedU8(r.value[1]), ErasedU8(r.value[2])};
      Fill(r, v, static_cast<uint8_t*>(sample), h, w, layout);
    }
  }
  const GridParams& g = ops.grid;
  if (!g.enabled || !g.finished) return;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      if (!GridBlack(g, x, y)) continue;
      for (int c = 0; c < 3; ++c) {
        const int64_t o = SlotOffset(layout, h, w, c, y, x);
        if (dtype == DType::kFloat32) static_cast<float*>(sample)[o] = g.value[c];
        else if (dtype == DType::kFloat16) static_cast<uint16_t*>(sample)[o] = FloatToHalfBits(g.value[c]);
        else static_cast<uint8_t*>(sample)[o] = ErasedU8(g.value[c]);
      }
    }
}

}  // namespace sluice
