// A view of an 8-bit 4:2:0 picture as video decoders give it: a luma plane and chroma at half
// width and height (rounded up), either as two planes (I420: FFmpeg's yuv420p) or one interleaved
// plane (NV12: NVDEC's output, `u` = the plane, `v` = the plane + 1, `uv_step` 2). The matrix and
// range say how its values become RGB (kernels/yuv/). It does not own its pixels, which are in
// host memory, or in GPU memory where `device` is set (NVDEC's pictures).
#ifndef SLUICE_CORE_YUV_VIEW_H_
#define SLUICE_CORE_YUV_VIEW_H_

#include <cstddef>
#include <cstdint>

namespace sluice {

enum class YuvMatrix : uint8_t { kBt601, kBt709, kBt2020 };

struct YuvView {
  const uint8_t* y = nullptr;
  const uint8_t* u = nullptr;
  const uint8_t* v = nullptr;
  ptrdiff_t y_stride = 0, uv_stride = 0;  // bytes between rows
  int uv_step = 1;                        // bytes between one plane's chroma samples in a row
  int height = 0, width = 0;
  YuvMatrix matrix = YuvMatrix::kBt601;
  bool full_range = false;  // 0-255 (JPEG range) rather than 16-235 / 16-240
  bool device = false;      // the planes are in GPU memory
};

}  // namespace sluice

#endif  // SLUICE_CORE_YUV_VIEW_H_
