#include "kernels/filter/gaussian_kernel.h"

#include <cmath>

namespace sluice {

void GaussianKernel1d(int size, float sigma, float* weights) {
  const float lim = static_cast<float>((size - 1) / (2.0 * std::sqrt(2.0)));
  // torch.linspace: start + i * step for the first half, end - (size - 1 - i) * step after.
  const float step = size > 1 ? (lim - -lim) / static_cast<float>(size - 1) : 0.0f;
  float sum = 0.0f;
  for (int i = 0; i < size; ++i) {
    const float x = i < size / 2 ? -lim + step * static_cast<float>(i) : lim - step * static_cast<float>(size - 1 - i);
    const float q = x / sigma;
    weights[i] = std::exp(-(q * q));  // the largest exponent is 0 (the centre), so softmax's shift is a no-op
    sum += weights[i];
  }
  for (int i = 0; i < size; ++i) weights[i] /= sum;
}

}  // namespace sluice
