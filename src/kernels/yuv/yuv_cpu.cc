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
    // Each chroma sample's terms once, for its two pixels of this row.
    for (int x = 0; x < in.width; x += 2) {
      const ptrdiff_t ci = (x / 2) * in.uv_step;
      const YuvChromaTerms t = YuvChroma(c, u[ci], v[ci]);
      YuvToRgbWith(c, t, y[x], dst + x * 3);
      if (x + 1 < in.width) YuvToRgbWith(c, t, y[x + 1], dst + x * 3 + 3);
    }
  }
}

}  // namespace sluice
