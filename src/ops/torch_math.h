// torchvision's numeric conventions, for drawing parameters exactly as it does: Python's round(),
// values that pass through a float32 tensor, and torch's float32 linspace.
//
// Thread-safety: pure functions.
#ifndef SLUICE_OPS_TORCH_MATH_H_
#define SLUICE_OPS_TORCH_MATH_H_

#include <cmath>

namespace sluice {

// Python's round() for values that fit in an int (ties to even).
inline int RoundHalfEven(double v) { return static_cast<int>(std::nearbyint(v)); }

// v as a float32 tensor holds it.
inline double Float32(double v) { return static_cast<double>(static_cast<float>(v)); }

// torchvision's float32 linspace(start, end, n)[i] (fused multiply-adds from each end).
float LinspaceF32(double start, double end, int n, int i);

}  // namespace sluice

#endif  // SLUICE_OPS_TORCH_MATH_H_
