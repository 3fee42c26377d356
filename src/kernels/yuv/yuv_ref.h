// The specification of YUV 4:2:0 to RGB, slow and plain, for tests: the matrix's equations
// (ITU-R BT.601 / BT.709 / BT.2020) evaluated in double for each pixel, the chroma sample of each
// 2x2 block of luma, rounded to the nearest integer and clamped to 0-255.
#ifndef SLUICE_KERNELS_YUV_YUV_REF_H_
#define SLUICE_KERNELS_YUV_YUV_REF_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/yuv_view.h"

namespace sluice {

inline std::vector<uint8_t> YuvToRgbRef(const YuvView& in) {
  const double kr = in.matrix == YuvMatrix::kBt709 ? 0.2126 : in.matrix == YuvMatrix::kBt2020 ? 0.2627 : 0.299;
  const double kb = in.matrix == YuvMatrix::kBt709 ? 0.0722 : in.matrix == YuvMatrix::kBt2020 ? 0.0593 : 0.114;
  const double kg = 1 - kr - kb;
  std::vector<uint8_t> out(static_cast<size_t>(in.width) * in.height * 3);
  for (int r = 0; r < in.height; ++r) {
    for (int c = 0; c < in.width; ++c) {
      const double y = in.y[r * in.y_stride + c];
      const ptrdiff_t ci = (r / 2) * in.uv_stride + (c / 2) * in.uv_step;
      const double u = in.u[ci], v = in.v[ci];
      // Normalized: E'y in [0, 1], E'pb and E'pr in [-0.5, 0.5], scaled to 255.
      const double ey = in.full_range ? y / 255 : (y - 16) / 219;
      const double epb = in.full_range ? (u - 128) / 255 : (u - 128) / 224;
      const double epr = in.full_range ? (v - 128) / 255 : (v - 128) / 224;
      const double red = ey + epr * 2 * (1 - kr);
      const double blue = ey + epb * 2 * (1 - kb);
      const double green = (ey - kr * red - kb * blue) / kg;
      const double rgb[3] = {red, green, blue};
      for (int k = 0; k < 3; ++k)
        out[(static_cast<size_t>(r) * in.width + c) * 3 + k] =
            static_cast<uint8_t>(std::clamp(std::floor(rgb[k] * 255 + 0.5), 0.0, 255.0));
    }
  }
  return out;
}

}  // namespace sluice

#endif  // SLUICE_KERNELS_YUV_YUV_REF_H_
