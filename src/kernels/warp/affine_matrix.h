// torchvision's affine() parameters and the inverse matrix the warp samples with
// (_get_inverse_affine_matrix): the math that turns RandomRotation's and RandomAffine's draws
// into WarpParams::m.
//
// Thread-safety: pure functions.
#ifndef SLUICE_KERNELS_WARP_AFFINE_MATRIX_H_
#define SLUICE_KERNELS_WARP_AFFINE_MATRIX_H_

namespace sluice {

// affine()'s arguments: angle and shears in degrees (affine's convention; RandomRotation's angle
// is -angle), translation in whole pixels.
struct AffineParams {
  double angle = 0.0;
  int tx = 0, ty = 0;
  double scale = 1.0;
  double shear_x = 0.0, shear_y = 0.0;
};

// The matrix that maps centred output coordinates to centred input coordinates of a
// width x height image. The centre is the image's (width / 2, height / 2), or `center` (pixel
// coordinates x, y) when given.
void InverseAffineMatrix(const AffineParams& a, int width, int height, const double* center, double m[6]);

// torchvision's _get_perspective_coeffs: the 8 coefficients of the perspective transform that
// maps each endpoint to its startpoint (pixel coordinates x, y of four corners), solved in
// double (the exact solution of the 8 x 8 system that torch's least squares gives), as float32.
// False when the points are degenerate (three on a line).
bool PerspectiveCoefficients(const double start[4][2], const double end[4][2], float c[8]);

// rotate(expand=True)'s output size for inverse matrix m on a width x height image: the bounding
// box of the image's corners under m, as torchvision's _compute_affine_output_size computes it
// (float32; coordinates truncated to 1e-4 before the ceil and floor).
void ExpandedSize(const double m[6], int width, int height, int* out_width, int* out_height);

}  // namespace sluice

#endif  // SLUICE_KERNELS_WARP_AFFINE_MATRIX_H_
