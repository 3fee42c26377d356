// The weights of GaussianBlur's filter, as torchvision computes them.
//
// Thread-safety: pure functions.
#ifndef SLUICE_KERNELS_FILTER_GAUSSIAN_KERNEL_H_
#define SLUICE_KERNELS_FILTER_GAUSSIAN_KERNEL_H_

namespace sluice {

// torchvision's _get_gaussian_kernel1d in float32: softmax(-(x / sigma)^2) over x = linspace(
// -lim, lim, size), lim = (size - 1) / (2 sqrt(2)). REQUIRES: 1 <= size <= FilterStep::kMaxTaps.
void GaussianKernel1d(int size, float sigma, float* weights);

}  // namespace sluice

#endif  // SLUICE_KERNELS_FILTER_GAUSSIAN_KERNEL_H_
