// Reference resize: the specification of the kernel, written for clarity, in double precision.
// Horizontal pass, round to uint8, vertical pass, round to uint8 (PIL's order and rounding).
#ifndef SLUICE_KERNELS_RESIZE_RESIZE_REF_H_
#define SLUICE_KERNELS_RESIZE_RESIZE_REF_H_

#include <cmath>
#include <vector>

#include "core/image_view.h"
#include "kernels/resize/resize_params.h"

namespace sluice {

inline uint8_t RefRoundToU8(double v) {
  const double r = std::floor(v + 0.5);
  return static_cast<uint8_t>(r < 0 ? 0 : (r > 255 ? 255 : r));
}

inline void ResizeRef(const ResizeParams& p, const ImageView& in, const MutableImageView& out) {
  const int C = in.channels;
  std::vector<double> w(static_cast<size_t>(MaxTaps(p.x, p.filter, p.antialias)) +
                        static_cast<size_t>(MaxTaps(p.y, p.filter, p.antialias)));
  // Horizontal pass over every input row into an 8-bit intermediate.
  std::vector<uint8_t> mid(static_cast<size_t>(in.height) * out.width * C);
  for (int y = 0; y < in.height; ++y) {
    for (int k = 0; k < out.width; ++k) {
      const TapWindow t = ComputeTaps(p.x, p.filter, p.antialias, p.x.ResizedIndex(k), w.data());
      for (int c = 0; c < C; ++c) {
        double acc = 0.0;
        for (int i = 0; i < t.count; ++i) acc += w[i] * in.row(y)[(t.first + i) * C + c];
        mid[(static_cast<size_t>(y) * out.width + k) * C + c] = t.count ? RefRoundToU8(acc) : p.fill[c];
      }
    }
  }
  for (int k = 0; k < out.height; ++k) {
    const TapWindow t = ComputeTaps(p.y, p.filter, p.antialias, p.y.ResizedIndex(k), w.data());
    for (int x = 0; x < out.width; ++x) {
      for (int c = 0; c < C; ++c) {
        double acc = 0.0;
        for (int i = 0; i < t.count; ++i)
          acc += w[i] * mid[(static_cast<size_t>(t.first + i) * out.width + x) * C + c];
        uint8_t v = RefRoundToU8(acc);
        // Padding in x stays fill whatever y does; padding in y is fill.
        if (t.count == 0 || p.x.ResizedIndex(x) < 0 || p.x.ResizedIndex(x) >= p.x.resized_len)
          v = p.fill[c];
        out.row(k)[x * C + c] = v;
      }
    }
  }
}

}  // namespace sluice

#endif  // SLUICE_KERNELS_RESIZE_RESIZE_REF_H_
