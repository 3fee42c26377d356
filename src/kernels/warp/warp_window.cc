#include "kernels/warp/warp_window.h"

#include <algorithm>
#include <cmath>

namespace sluice {

namespace {

// A resample whose output is its whole resized image, unflipped: pixel k is resized pixel k.
bool Plain(const AxisMap& m, int len) {
  return !m.flip && m.out_off == 0 && m.out_len == m.resized_len && m.out_len == len;
}

// The warped pixels [lo, hi) the window shows, inside the warped image of length n.
void Shown(const WarpAxis& a, int n, int* lo, int* hi) {
  *lo = std::max(a.off, 0);
  *hi = std::min(a.off + a.len, n);
}

// [lo, hi): the source pixels within kWarpWindowMargin of [min_s, max_s], inside [0, n).
void Span(double min_s, double max_s, int n, int* lo, int* hi) {
  *lo = std::max(static_cast<int>(std::floor(min_s)) - kWarpWindowMargin, 0);
  *hi = std::min(static_cast<int>(std::ceil(max_s)) + kWarpWindowMargin + 1, n);
}

void Narrow(AxisMap* m, int lo, int hi) {
  m->out_off = lo;
  m->out_len = hi - lo;
}

}  // namespace

bool WindowWarpSource(ResizeParams* resample, WarpParams* warp) {
  if (!warp->enabled || warp->perspective || warp->src_x0 != 0 || warp->src_y0 != 0) return false;
  if (!Plain(resample->x, warp->src_w) || !Plain(resample->y, warp->src_h)) return false;
  int j0, j1, i0, i1;
  Shown(warp->x, warp->out_w, &j0, &j1);
  Shown(warp->y, warp->out_h, &i0, &i1);
  if (j0 >= j1 || i0 >= i1) return false;  // all padding: nothing is read
  double min_x = INFINITY, max_x = -INFINITY, min_y = INFINITY, max_y = -INFINITY;
  for (const int j : {j0, j1 - 1}) {
    for (const int i : {i0, i1 - 1}) {
      double sx, sy;
      if (warp->float_grid) {
        FloatGridPoint(*warp, j, i, &sx, &sy);
      } else {
        WarpSourcePoint(*warp, j, i, &sx, &sy);
      }
      min_x = std::min(min_x, sx), max_x = std::max(max_x, sx);
      min_y = std::min(min_y, sy), max_y = std::max(max_y, sy);
    }
  }
  int x0, x1, y0, y1;
  Span(min_x, max_x, warp->src_w, &x0, &x1);
  Span(min_y, max_y, warp->src_h, &y0, &y1);
  if (x0 >= x1 || y0 >= y1) return false;  // every point outside the image: only the fill
  if (x0 == 0 && y0 == 0 && x1 == warp->src_w && y1 == warp->src_h) return false;
  Narrow(&resample->x, x0, x1);
  Narrow(&resample->y, y0, y1);
  warp->src_x0 = x0;
  warp->src_y0 = y0;
  return true;
}

}  // namespace sluice
