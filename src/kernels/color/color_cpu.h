// CPU colour step: runs a sample's ColorOps in place on its RGB8 image (after the geometry,
// before the finish step). The kernel allocates nothing.
//
// Thread-safety: reentrant.
#ifndef SLUICE_KERNELS_COLOR_COLOR_CPU_H_
#define SLUICE_KERNELS_COLOR_COLOR_CPU_H_

#include "core/image_view.h"
#include "kernels/color/color_params.h"

namespace sluice {

// The statistics the steps need (contrast, autocontrast, equalize), each on the image as the
// steps before it leave it: one read pass per such step.
void ColorStatsCpu(const ColorOps& ops, const ImageView& img, ColorStats* stats);

// Applies every step to `img`, in place.
void ApplyColorCpu(const ColorOps& ops, const MutableImageView& img);

}  // namespace sluice

#endif  // SLUICE_KERNELS_COLOR_COLOR_CPU_H_
