#include "kernels/orient/orient_cpu.h"

#include "kernels/orient/orient_params.h"

namespace sluice {

void OrientCpu(int orientation, const ImageView& in, const MutableImageView& out) {
  for (int y = 0; y < out.height; ++y) {
    uint8_t* dst = out.row(y);
    for (int x = 0; x < out.width; ++x) {
      int sx, sy;
      OrientSource(orientation, in.width, in.height, x, y, &sx, &sy);
      const uint8_t* src = in.row(sy) + sx * 3;
      dst[3 * x] = src[0];
      dst[3 * x + 1] = src[1];
      dst[3 * x + 2] = src[2];
    }
  }
}

}  // namespace sluice
