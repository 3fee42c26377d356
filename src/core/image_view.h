// Views of interleaved 8-bit images (HWC), the currency between decoders and kernels.
// A view does not own its pixels; it is valid while the buffer it points into is.
#ifndef SLUICE_CORE_IMAGE_VIEW_H_
#define SLUICE_CORE_IMAGE_VIEW_H_

#include <cstddef>
#include <cstdint>

namespace sluice {

// An axis-aligned rectangle of pixels: columns [x, x + w), rows [y, y + h).
struct Rect {
  int x = 0, y = 0, w = 0, h = 0;
  bool operator==(const Rect&) const = default;
};

struct ImageView {
  const uint8_t* data = nullptr;
  int height = 0, width = 0, channels = 3;
  ptrdiff_t row_stride = 0;  // bytes between rows
  const uint8_t* row(int y) const { return data + static_cast<ptrdiff_t>(y) * row_stride; }
};

struct MutableImageView {
  uint8_t* data = nullptr;
  int height = 0, width = 0, channels = 3;
  ptrdiff_t row_stride = 0;
  uint8_t* row(int y) const { return data + static_cast<ptrdiff_t>(y) * row_stride; }
  operator ImageView() const { return ImageView{data, height, width, channels, row_stride}; }
};

}  // namespace sluice

#endif  // SLUICE_CORE_IMAGE_VIEW_H_
