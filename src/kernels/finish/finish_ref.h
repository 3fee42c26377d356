// Reference finish step: one element at a time, straight from the definitions.
#ifndef SLUICE_KERNELS_FINISH_FINISH_REF_H_
#define SLUICE_KERNELS_FINISH_FINISH_REF_H_

#include <cstring>

#include "core/half.h"
#include "core/image_view.h"
#include "kernels/finish/finish_params.h"

namespace sluice {

inline void FinishRef(const FinishParams& p, const ImageView& in, void* slot) {
  for (int y = 0; y < in.height; ++y)
    for (int x = 0; x < in.width; ++x)
      for (int c = 0; c < 3; ++c) {
        const uint8_t v = in.row(y)[x * in.channels + c];
        const int64_t o = SlotOffset(p.layout, in.height, in.width, c, y, x);
        switch (p.dtype) {
          case DType::kUInt8: static_cast<uint8_t*>(slot)[o] = v; break;
          case DType::kFloat32: static_cast<float*>(slot)[o] = NormalizedValue(v, p, c); break;
          case DType::kFloat16:
            static_cast<uint16_t*>(slot)[o] = FloatToHalfBits(NormalizedValue(v, p, c));
            break;
          default: break;
        }
      }
}

}  // namespace sluice

#endif  // SLUICE_KERNELS_FINISH_FINISH_REF_H_
