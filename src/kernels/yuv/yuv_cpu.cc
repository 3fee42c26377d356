#include "kernels/yuv/yuv_cpu.h"

#include "kernels/yuv/yuv_params.h"

namespace sluice {

void YuvToRgbCpu(const YuvView& in, const MutableImageView& out) {
  const YuvCoeffs c = MakeYuvCoeffs(in.matrix, in.full_range);
  for (int r = 0; r < in.height; ++r) {
    const uint8_t* y = in.y + r * in.y_stride;
    const uint8_t* u = in.u + (r / 2) * in.uv_stride;
    const uint8_t* v = in.v + (r / 2) * in.uv_stride;
    uint8_t* dst = out.row(r);
    for (int x = 0; x < in.width; ++x) {
      const ptrdiff_t ci = (x / 2) * in.uv_step;
      YuvToRgbPixel(c, y[x], u[ci], v[ci], dst + x * 3);
    }
  }
}

}  // namespace sluice
