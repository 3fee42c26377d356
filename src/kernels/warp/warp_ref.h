// Reference oracle for the affine warp: torchvision.transforms.v2.functional.affine_image (and
// rotate_image, which is affine with the angle negated) on an RGB8 image with expand=False,
// written from torchvision's definitions, one output pixel at a time, with no window: the
// inverse matrix of _get_inverse_affine_matrix, the centred grid of _affine_grid, grid_sample's
// unnormalization (align_corners=False), its nearest and bilinear sampling with zero padding,
// and _apply_grid_transform's fill mask and rounding.
//
// Thread-safety: pure functions.
#ifndef SLUICE_KERNELS_WARP_WARP_REF_H_
#define SLUICE_KERNELS_WARP_WARP_REF_H_

#include <cmath>
#include <cstdint>
#include <vector>

namespace sluice::ref {

struct AffineArgs {
  double angle = 0.0;  // affine()'s angle; rotate(a) is affine(-a)
  double tx = 0.0, ty = 0.0;
  double scale = 1.0;
  double shear_x = 0.0, shear_y = 0.0;
  const double* center = nullptr;  // (x, y) in pixels, or the image centre
  bool bilinear = false;
  uint8_t fill[3] = {0, 0, 0};
};

inline std::vector<uint8_t> AffineImage(const std::vector<uint8_t>& img, int w, int h, const AffineArgs& a) {
  const double pi = 3.14159265358979323846;
  const double rot = a.angle * (pi / 180.0), sx = a.shear_x * (pi / 180.0), sy = a.shear_y * (pi / 180.0);
  const double ccx = a.center ? a.center[0] - w * 0.5 : 0.0, ccy = a.center ? a.center[1] - h * 0.5 : 0.0;
  // Rotate-scale-shear without the scale; its inverse with the scale; then the centre and shift.
  const double ra = std::cos(rot - sy) / std::cos(sy);
  const double rb = -(ra * std::tan(sx) + std::sin(rot));
  const double rc = std::sin(rot - sy) / std::cos(sy);
  const double rd = std::cos(rot) - rc * std::tan(sx);
  double m[6] = {rd / a.scale, -rb / a.scale, 0.0, -rc / a.scale, ra / a.scale, 0.0};
  m[2] += ccx - m[0] * (ccx + a.tx) - m[1] * (ccy + a.ty);
  m[5] += ccy - m[3] * (ccx + a.tx) - m[4] * (ccy + a.ty);

  auto pixel = [&](int x, int y, int c) -> double {  // zero padding
    if (x < 0 || x >= w || y < 0 || y >= h) return 0.0;
    return img[(static_cast<size_t>(y) * w + x) * 3 + c];
  };
  auto inside = [&](int x, int y) -> double { return x >= 0 && x < w && y >= 0 && y < h ? 1.0 : 0.0; };
  std::vector<uint8_t> out(img.size());
  for (int i = 0; i < h; ++i) {
    for (int j = 0; j < w; ++j) {
      const double xb = j - (w - 1) * 0.5, yb = i - (h - 1) * 0.5;
      const double px = m[0] * xb + m[1] * yb + m[2] + (w - 1) * 0.5;
      const double py = m[3] * xb + m[4] * yb + m[5] + (h - 1) * 0.5;
      for (int c = 0; c < 3; ++c) {
        double v, mask;
        if (!a.bilinear) {
          const int x = static_cast<int>(std::nearbyint(px)), y = static_cast<int>(std::nearbyint(py));
          v = pixel(x, y, c);
          mask = inside(x, y);
          v = mask < 0.5 ? a.fill[c] : v;
        } else {
          const int x0 = static_cast<int>(std::floor(px)), y0 = static_cast<int>(std::floor(py));
          const double nw = (x0 + 1 - px) * (y0 + 1 - py), ne = (px - x0) * (y0 + 1 - py);
          const double sw = (x0 + 1 - px) * (py - y0), se = (px - x0) * (py - y0);
          v = pixel(x0, y0, c) * nw + pixel(x0 + 1, y0, c) * ne + pixel(x0, y0 + 1, c) * sw +
              pixel(x0 + 1, y0 + 1, c) * se;
          mask = inside(x0, y0) * nw + inside(x0 + 1, y0) * ne + inside(x0, y0 + 1) * sw + inside(x0 + 1, y0 + 1) * se;
          v = (v - a.fill[c]) * mask + a.fill[c];
        }
        const double r = std::nearbyint(v);
        out[(static_cast<size_t>(i) * w + j) * 3 + c] = static_cast<uint8_t>(r < 0 ? 0 : (r > 255 ? 255 : r));
      }
    }
  }
  return out;
}

}  // namespace sluice::ref

#endif  // SLUICE_KERNELS_WARP_WARP_REF_H_
