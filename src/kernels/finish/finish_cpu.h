// CPU finish step. The per-channel value tables are computed once per loader (FinishLut)
// and passed in; the kernel allocates nothing.
//
// Thread-safety: FinishCpu is reentrant; a FinishLut is read-only after Build.
#ifndef SLUICE_KERNELS_FINISH_FINISH_CPU_H_
#define SLUICE_KERNELS_FINISH_FINISH_CPU_H_

#include <cstdint>

#include "core/image_view.h"
#include "kernels/finish/finish_params.h"

namespace sluice {

struct FinishLut {
  float f32[3][256];
  uint16_t f16[3][256];
  static FinishLut Build(const FinishParams& p);
};

// Writes `in` (h x w RGB8) into `slot` (h*w*3 elements of p.dtype, laid out as p.layout).
void FinishCpu(const FinishParams& p, const FinishLut& lut, const ImageView& in, void* slot);

}  // namespace sluice

#endif  // SLUICE_KERNELS_FINISH_FINISH_CPU_H_
