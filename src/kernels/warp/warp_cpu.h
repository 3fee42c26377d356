// CPU affine warp (RandomRotation, RandomAffine and the window after them): warp_params.h's
// per-pixel math over an RGB8 image.
//
// Thread-safety: reentrant.
#ifndef SLUICE_KERNELS_WARP_WARP_CPU_H_
#define SLUICE_KERNELS_WARP_WARP_CPU_H_

#include "core/image_view.h"
#include "kernels/warp/warp_params.h"

namespace sluice {

// REQUIRES: p.enabled; in is p.src_w x p.src_h; out is p.x.len x p.y.len; 3 channels.
void WarpCpu(const WarpParams& p, const ImageView& in, const MutableImageView& out);

}  // namespace sluice

#endif  // SLUICE_KERNELS_WARP_WARP_CPU_H_
