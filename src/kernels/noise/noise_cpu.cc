#include "kernels/noise/noise_cpu.h"

#include "core/half.h"
#include "core/slot.h"

namespace sluice {

void NoiseFinishCpu(const NoiseParams& n, const ImageView& in, DType dtype, Layout layout, void* slot) {
  for (int y = 0; y < in.height; ++y) {
    const uint8_t* row = in.row(y);
    for (int x = 0; x < in.width; ++x) {
      float z[3];
      noise::Normals(n, static_cast<int64_t>(y) * in.width + x, z);
      for (int c = 0; c < 3; ++c) {
        const float v = noise::Value(n, row[3 * x + c], c, z[c]);
        const int64_t o = SlotOffset(layout, in.height, in.width, c, y, x);
        if (dtype == DType::kFloat32) {
          static_cast<float*>(slot)[o] = v;
        } else {
          static_cast<uint16_t*>(slot)[o] = FloatToHalfBits(v);
        }
      }
    }
  }
}

}  // namespace sluice
