// CPU finish with GaussianNoise: writes an RGB8 image into its slot as the finish step does
// (ToTensor scaling, Normalize, cast, layout), with the noise added where its place in the list
// says (noise_params.h). Float outputs only.
//
// Thread-safety: reentrant.
#ifndef SLUICE_KERNELS_NOISE_NOISE_CPU_H_
#define SLUICE_KERNELS_NOISE_NOISE_CPU_H_

#include "core/image_view.h"
#include "kernels/noise/noise_params.h"
#include "sluice/types.h"

namespace sluice {

// REQUIRES: dtype is kFloat32 or kFloat16.
void NoiseFinishCpu(const NoiseParams& n, const ImageView& in, DType dtype, Layout layout, void* slot);

}  // namespace sluice

#endif  // SLUICE_KERNELS_NOISE_NOISE_CPU_H_
