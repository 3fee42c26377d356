// Reference orientation: each EXIF value as PIL's exif_transpose composes it from
// left-right flips, top-bottom flips and transposes, applied one after another.
#ifndef SLUICE_KERNELS_ORIENT_ORIENT_REF_H_
#define SLUICE_KERNELS_ORIENT_ORIENT_REF_H_

#include <cstdint>
#include <vector>

namespace sluice {

struct RefImage {
  int w = 0, h = 0;
  std::vector<uint8_t> px;  // RGB8
  uint8_t* at(int x, int y) { return &px[(static_cast<size_t>(y) * w + x) * 3]; }
};

inline RefImage RefFlipLR(RefImage a) {
  RefImage b = a;
  for (int y = 0; y < a.h; ++y)
    for (int x = 0; x < a.w; ++x)
      for (int c = 0; c < 3; ++c) b.at(x, y)[c] = a.at(a.w - 1 - x, y)[c];
  return b;
}

inline RefImage RefFlipTB(RefImage a) {
  RefImage b = a;
  for (int y = 0; y < a.h; ++y)
    for (int x = 0; x < a.w; ++x)
      for (int c = 0; c < 3; ++c) b.at(x, y)[c] = a.at(x, a.h - 1 - y)[c];
  return b;
}

inline RefImage RefTranspose(RefImage a) {
  RefImage b;
  b.w = a.h;
  b.h = a.w;
  b.px.resize(a.px.size());
  for (int y = 0; y < b.h; ++y)
    for (int x = 0; x < b.w; ++x)
      for (int c = 0; c < 3; ++c) b.at(x, y)[c] = a.at(y, x)[c];
  return b;
}

// PIL: 2 FLIP_LEFT_RIGHT, 3 ROTATE_180, 4 FLIP_TOP_BOTTOM, 5 TRANSPOSE, 6 ROTATE_270,
// 7 TRANSVERSE, 8 ROTATE_90 (counter-clockwise angles).
inline RefImage OrientRef(int orientation, RefImage a) {
  switch (orientation) {
    case 2: return RefFlipLR(a);
    case 3: return RefFlipTB(RefFlipLR(a));
    case 4: return RefFlipTB(a);
    case 5: return RefTranspose(a);
    case 6: return RefFlipLR(RefTranspose(a));   // rotate 90 clockwise
    case 7: return RefFlipTB(RefFlipLR(RefTranspose(a)));
    case 8: return RefFlipTB(RefTranspose(a));   // rotate 90 counter-clockwise
    default: return a;
  }
}

}  // namespace sluice

#endif  // SLUICE_KERNELS_ORIENT_ORIENT_REF_H_
