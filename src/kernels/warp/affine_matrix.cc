#include "kernels/warp/affine_matrix.h"

#include <cmath>

namespace sluice {

namespace {
constexpr double kPi = 3.14159265358979323846;
double Radians(double degrees) { return degrees * (kPi / 180.0); }  // as Python's math.radians
}  // namespace

void InverseAffineMatrix(const AffineParams& a, int width, int height, const double* center, double m[6]) {
  const double cx = center != nullptr ? center[0] - width * 0.5 : 0.0;
  const double cy = center != nullptr ? center[1] - height * 0.5 : 0.0;
  const double rot = Radians(a.angle), sx = Radians(a.shear_x), sy = Radians(a.shear_y);
  const double cos_sy = std::cos(sy), tan_sx = std::tan(sx);
  const double ma = std::cos(rot - sy) / cos_sy;
  const double mb = -(ma * tan_sx + std::sin(rot));
  const double mc = std::sin(rot - sy) / cos_sy;
  const double md = std::cos(rot) - mc * tan_sx;
  const double ctx = cx + a.tx, cty = cy + a.ty;
  m[0] = md / a.scale;
  m[1] = -mb / a.scale;
  m[3] = -mc / a.scale;
  m[4] = ma / a.scale;
  m[2] = 0.0 + (cx - m[0] * ctx - m[1] * cty);
  m[5] = 0.0 + (cy - m[3] * ctx - m[4] * cty);
}

}  // namespace sluice
