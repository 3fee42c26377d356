// CPU erasing (Cutout, RandomErasing): the pixel-stage rectangles on an RGB8 image before the
// finish, and the finished-stage ones on the finished sample after it.
//
// Thread-safety: reentrant.
#ifndef SLUICE_KERNELS_ERASE_ERASE_CPU_H_
#define SLUICE_KERNELS_ERASE_ERASE_CPU_H_

#include "core/image_view.h"
#include "kernels/erase/erase_params.h"
#include "sluice/types.h"

namespace sluice {

// Sets the pixels of the pixel-stage rectangles.
void ErasePixelsCpu(const EraseOps& ops, const MutableImageView& img);

// Sets the elements of the finished-stage rectangles in a finished h x w sample.
void EraseFinishedCpu(const EraseOps& ops, void* sample, int h, int w, DType dtype, Layout layout);

}  // namespace sluice

#endif  // SLUICE_KERNELS_ERASE_ERASE_CPU_H_
