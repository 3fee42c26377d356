// WindowWarpSource: narrows the resample that feeds an affine warp to the part of its output the
// warp reads, so that neither a materialized resample nor a CPU decode before it makes pixels the
// warp never fetches (the seed pipeline's rotation then crop reads 54-82% of the image it rotates,
// by angle; the engines decode whole files either way).
//
//   out.segments[k] = resample; out.warps[k] = warp;
//   WindowWarpSource(&out.segments[k], &out.warps[k]);  // same pixels out, less work
//
// The window is the bounding box of the source points of the warped pixels the warp's window
// shows (their images under the affine map: its corners), widened by kMargin pixels for the
// bilinear neighbours and the rounding of the points, and clipped to the image: every pixel the
// warp fetches lies inside it, so the output is bit for bit the same. Only an affine warp fed by a
// plain resample (no flip, crop or padding in its output) is narrowed; perspective warps and
// windows that would cover the whole image are left alone.
//
// Thread-safety: pure.
#ifndef SLUICE_KERNELS_WARP_WARP_WINDOW_H_
#define SLUICE_KERNELS_WARP_WARP_WINDOW_H_

#include "kernels/resize/resize_params.h"
#include "kernels/warp/warp_params.h"

namespace sluice {

inline constexpr int kWarpWindowMargin = 2;

// REQUIRES: resample's output is the image the warp reads (warp->src_w x warp->src_h) when
// warp->enabled. Returns whether it narrowed them (then resample->x/y.out_off and out_len and
// warp->src_x0/src_y0 describe the window).
bool WindowWarpSource(ResizeParams* resample, WarpParams* warp);

}  // namespace sluice

#endif  // SLUICE_KERNELS_WARP_WARP_WINDOW_H_
