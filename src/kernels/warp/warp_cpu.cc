#include "kernels/warp/warp_cpu.h"

namespace sluice {

void WarpCpu(const WarpParams& p, const ImageView& in, const MutableImageView& out) {
  const auto fetch = [&in](int x, int y, uint8_t* rgb) {
    const uint8_t* px = in.row(y) + 3 * x;
    rgb[0] = px[0], rgb[1] = px[1], rgb[2] = px[2];
  };
  for (int l = 0; l < out.height; ++l) {
    uint8_t* row = out.row(l);
    for (int k = 0; k < out.width; ++k) WarpPixel(p, k, l, fetch, row + 3 * k);
  }
}

}  // namespace sluice
