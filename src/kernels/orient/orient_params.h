// EXIF orientation (1..8) as a pixel mapping, shared by the CPU and GPU code: displayed pixel
// (x, y) of an oriented image shows stored pixel OrientSource(...). Matches PIL's exif_transpose.
#ifndef SLUICE_KERNELS_ORIENT_ORIENT_PARAMS_H_
#define SLUICE_KERNELS_ORIENT_ORIENT_PARAMS_H_

#include "core/hd.h"
#include "core/image_view.h"

namespace sluice {

// `sw`, `sh`: stored width and height.
SLUICE_HD void OrientSource(int orientation, int sw, int sh, int x, int y, int* sx, int* sy) {
  switch (orientation) {
    case 2: *sx = sw - 1 - x; *sy = y; break;           // mirror horizontal
    case 3: *sx = sw - 1 - x; *sy = sh - 1 - y; break;  // rotate 180
    case 4: *sx = x; *sy = sh - 1 - y; break;           // mirror vertical
    case 5: *sx = y; *sy = x; break;                    // transpose
    case 6: *sx = y; *sy = sh - 1 - x; break;           // rotate 90 clockwise
    case 7: *sx = sw - 1 - y; *sy = sh - 1 - x; break;  // transverse
    case 8: *sx = sw - 1 - y; *sy = x; break;           // rotate 90 counter-clockwise
    default: *sx = x; *sy = y; break;
  }
}

// The inverse of OrientSource: the displayed pixel that shows stored pixel (sx, sy).
SLUICE_HD void OrientDest(int orientation, int sw, int sh, int sx, int sy, int* x, int* y) {
  switch (orientation) {
    case 2: *x = sw - 1 - sx; *y = sy; break;
    case 3: *x = sw - 1 - sx; *y = sh - 1 - sy; break;
    case 4: *x = sx; *y = sh - 1 - sy; break;
    case 5: *x = sy; *y = sx; break;
    case 6: *x = sh - 1 - sy; *y = sx; break;
    case 7: *x = sh - 1 - sy; *y = sw - 1 - sx; break;
    case 8: *x = sy; *y = sw - 1 - sx; break;
    default: *x = sx; *y = sy; break;
  }
}

// The displayed rectangle that shows stored rectangle `r` of a sw x sh image. Orienting the
// pixels of `r` as if they were a whole image gives exactly that displayed rectangle's pixels.
inline Rect DisplayRect(int orientation, int sw, int sh, const Rect& r) {
  int ax, ay, bx, by;
  OrientDest(orientation, sw, sh, r.x, r.y, &ax, &ay);
  OrientDest(orientation, sw, sh, r.x + r.w - 1, r.y + r.h - 1, &bx, &by);
  const int x0 = ax < bx ? ax : bx, x1 = ax < bx ? bx : ax;
  const int y0 = ay < by ? ay : by, y1 = ay < by ? by : ay;
  return Rect{x0, y0, x1 - x0 + 1, y1 - y0 + 1};
}

// The stored rectangle shown by displayed rectangle `d` (the inverse of DisplayRect).
inline Rect StoredRect(int orientation, int sw, int sh, const Rect& d) {
  int ax, ay, bx, by;
  OrientSource(orientation, sw, sh, d.x, d.y, &ax, &ay);
  OrientSource(orientation, sw, sh, d.x + d.w - 1, d.y + d.h - 1, &bx, &by);
  const int x0 = ax < bx ? ax : bx, x1 = ax < bx ? bx : ax;
  const int y0 = ay < by ? ay : by, y1 = ay < by ? by : ay;
  return Rect{x0, y0, x1 - x0 + 1, y1 - y0 + 1};
}

}  // namespace sluice

#endif  // SLUICE_KERNELS_ORIENT_ORIENT_PARAMS_H_
