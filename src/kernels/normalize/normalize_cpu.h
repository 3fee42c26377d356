// CPU finish step. The per-channel value tables are computed once per loader (NormalizeLut)
// and passed in; the kernel allocates nothing.
//
// Thread-safety: NormalizeCpu is reentrant; a NormalizeLut is read-only after Build.
#ifndef SLUICE_KERNELS_NORMALIZE_NORMALIZE_CPU_H_
#define SLUICE_KERNELS_NORMALIZE_NORMALIZE_CPU_H_

#include <cstdint>

#include "core/image_view.h"
#include "kernels/normalize/normalize_params.h"

namespace sluice {

struct NormalizeLut {
  float f32[3][256];
  uint16_t f16[3][256];
  static NormalizeLut Build(const NormalizeParams& p);
};

// Writes `in` (h x w RGB8) into `slot` (h*w*3 elements of p.dtype, laid out as p.layout).
void NormalizeCpu(const NormalizeParams& p, const NormalizeLut& lut, const ImageView& in, void* slot);

}  // namespace sluice

#endif  // SLUICE_KERNELS_NORMALIZE_NORMALIZE_CPU_H_
