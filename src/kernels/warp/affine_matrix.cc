#include "kernels/warp/affine_matrix.h"

#include <algorithm>
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

void ExpandedSize(const double m[6], int width, int height, int* out_width, int* out_height) {
  const float hw = 0.5f * static_cast<float>(width), hh = 0.5f * static_cast<float>(height);
  const float corners[4][2] = {{-hw, -hh}, {-hw, hh}, {hw, hh}, {hw, -hh}};
  float lo[2], hi[2];
  for (int r = 0; r < 2; ++r) {  // row r of the matrix, as float32 (theta)
    const float t0 = static_cast<float>(m[3 * r]), t1 = static_cast<float>(m[3 * r + 1]);
    const float t2 = static_cast<float>(m[3 * r + 2]);
    for (int k = 0; k < 4; ++k) {
      const float v = corners[k][0] * t0 + corners[k][1] * t1 + t2;
      lo[r] = k == 0 ? v : std::min(lo[r], v);
      hi[r] = k == 0 ? v : std::max(hi[r], v);
    }
  }
  const float half[2] = {hw, hh};
  int size[2];
  for (int r = 0; r < 2; ++r) {
    constexpr float kTol = 1e-4f, kInvTol = 1.0f / kTol;
    const float cmax = std::ceil(std::trunc((hi[r] + half[r]) * kInvTol) * kTol);
    const float cmin = std::floor(std::trunc((lo[r] + half[r]) * kInvTol) * kTol);
    size[r] = static_cast<int>(cmax - cmin);
  }
  *out_width = size[0], *out_height = size[1];
}

bool PerspectiveCoefficients(const double start[4][2], const double end[4][2], float c[8]) {
  double a[8][9];  // the augmented system: rows 2k and 2k + 1 for point k
  for (int k = 0; k < 4; ++k) {
    const double x = end[k][0], y = end[k][1], u = start[k][0], v = start[k][1];
    const double r0[9] = {x, y, 1, 0, 0, 0, -u * x, -u * y, u};
    const double r1[9] = {0, 0, 0, x, y, 1, -v * x, -v * y, v};
    std::copy(r0, r0 + 9, a[2 * k]);
    std::copy(r1, r1 + 9, a[2 * k + 1]);
  }
  for (int col = 0; col < 8; ++col) {  // Gaussian elimination with partial pivoting
    int pivot = col;
    for (int r = col + 1; r < 8; ++r)
      if (std::fabs(a[r][col]) > std::fabs(a[pivot][col])) pivot = r;
    if (std::fabs(a[pivot][col]) < 1e-12) return false;
    std::swap(a[col], a[pivot]);
    for (int r = 0; r < 8; ++r) {
      if (r == col) continue;
      const double f = a[r][col] / a[col][col];
      for (int k = col; k < 9; ++k) a[r][k] -= f * a[col][k];
    }
  }
  for (int k = 0; k < 8; ++k) c[k] = static_cast<float>(a[k][8] / a[k][k]);
  return true;
}

}  // namespace sluice
