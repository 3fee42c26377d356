// Reference GaussianNoise: torchvision.transforms.v2.functional.gaussian_noise on the whole float
// tensor (ToTensor, the noise tensor mean + z * sigma, the sum, the clamp, then Normalize), one
// operation at a time in float32, given the normals.
#ifndef SLUICE_KERNELS_NOISE_NOISE_REF_H_
#define SLUICE_KERNELS_NOISE_NOISE_REF_H_

#include <algorithm>
#include <cstdint>
#include <vector>

namespace sluice::noise_ref {

// img: H x W x 3 uint8; z: the normals, same shape. Returns H x W x 3 float32.
inline std::vector<float> GaussianNoise(const std::vector<uint8_t>& img, const std::vector<float>& z, float mean,
                                        float sigma, bool clip, const float* norm_mean, const float* norm_std,
                                        bool after_normalize) {
  std::vector<float> x(img.size());
  for (size_t i = 0; i < img.size(); ++i) x[i] = static_cast<float>(img[i]) / 255.0f;  // ToTensor
  auto normalize = [&] {
    if (norm_mean == nullptr) return;
    for (size_t i = 0; i < x.size(); ++i) x[i] = (x[i] - norm_mean[i % 3]) / norm_std[i % 3];
  };
  if (after_normalize) normalize();
  std::vector<float> noise(z.size());
  for (size_t i = 0; i < z.size(); ++i) {
    const float scaled = z[i] * sigma;
    noise[i] = mean + scaled;
  }
  for (size_t i = 0; i < x.size(); ++i) x[i] = x[i] + noise[i];
  if (clip)
    for (float& v : x) v = std::min(std::max(v, 0.0f), 1.0f);
  if (!after_normalize) normalize();
  return x;
}

}  // namespace sluice::noise_ref

#endif  // SLUICE_KERNELS_NOISE_NOISE_REF_H_
