// YUV 4:2:0 (I420 or NV12) to interleaved RGB8 on the CPU, by yuv_params.h's math.
// REQUIRES: out.height == in.height, out.width == in.width, out.channels == 3.
#ifndef SLUICE_KERNELS_YUV_YUV_CPU_H_
#define SLUICE_KERNELS_YUV_YUV_CPU_H_

#include "core/image_view.h"
#include "core/yuv_view.h"

namespace sluice {

void YuvToRgbCpu(const YuvView& in, const MutableImageView& out);

}  // namespace sluice

#endif  // SLUICE_KERNELS_YUV_YUV_CPU_H_
