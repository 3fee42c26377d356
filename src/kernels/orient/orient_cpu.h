// CPU orientation: rewrites a stored-orientation RGB8 image as displayed.
// Thread-safety: reentrant.
#ifndef SLUICE_KERNELS_ORIENT_ORIENT_CPU_H_
#define SLUICE_KERNELS_ORIENT_ORIENT_CPU_H_

#include "core/image_view.h"

namespace sluice {

// REQUIRES: out is in.width x in.height for orientations 1..4, in.height x in.width for 5..8;
// both have 3 channels and do not overlap.
void OrientCpu(int orientation, const ImageView& in, const MutableImageView& out);

}  // namespace sluice

#endif  // SLUICE_KERNELS_ORIENT_ORIENT_CPU_H_
