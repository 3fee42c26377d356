// CPU resize: PIL's fixed-point separable resampling (22-bit weights, horizontal pass into an
// 8-bit intermediate, then vertical). Bit-exact with PIL's Image.resize for the same region.
// On x86 the passes use SSSE3/AVX2 when the CPU has them (checked at run time), with the same
// exact integer arithmetic; the portable path remains and is tested against them.
//
// The kernel allocates nothing: the caller owns a ResizeScratch (one per thread) whose vectors
// grow to the largest sample seen and are reused.
//
// Thread-safety: reentrant; a ResizeScratch is used by one thread at a time.
#ifndef SLUICE_KERNELS_RESIZE_RESIZE_CPU_H_
#define SLUICE_KERNELS_RESIZE_RESIZE_CPU_H_

#include <cstdint>
#include <vector>

#include "core/image_view.h"
#include "kernels/resize/resize_params.h"

namespace sluice {

// Fixed-point taps of one axis, one row of `stride` coefficients per output pixel.
struct AxisTaps {
  std::vector<int32_t> first, count, coef;
  // The same coefficients for the SIMD path: per pair of taps, two words packing the high
  // (c >> 11) and low (c & 2047) halves of both taps as 16-bit lanes; `pair_stride` per pixel.
  std::vector<int32_t> pairs;
  std::vector<double> weights;  // staging for ComputeTaps
  int stride = 0;
  int pair_stride = 0;
  bool pairs_fit = true;  // every high half fits 16 bits (false only for degenerate weights)
};

struct ResizeScratch {
  AxisTaps x, y;
  std::vector<uint8_t> mid;   // horizontal pass output
  std::vector<uint32_t> acc;  // vertical pass accumulators (sums modulo 2^32)
};

// The fixed-point taps of output pixels 0..m.out_len of one axis (flip applied), as the CPU
// resize uses them; the GPU path uploads the same tables.
void PrepareTaps(const AxisMap& m, Filter f, bool antialias, AxisTaps* t);

// REQUIRES: out.width == p.x.out_len, out.height == p.y.out_len, 3 channels; every tap of a
// non-padding output pixel lies inside `in`. `allow_simd` = false forces the portable code
// (for tests; results are identical).
void ResizeCpu(const ResizeParams& p, const ImageView& in, const MutableImageView& out,
               ResizeScratch* scratch, bool allow_simd = true);

}  // namespace sluice

#endif  // SLUICE_KERNELS_RESIZE_RESIZE_CPU_H_
