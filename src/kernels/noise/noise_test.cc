// GaussianNoise: the normals' distribution, determinism per key, and the CPU finish against the
// torchvision-definition oracle (noise_ref.h) given the same normals.
#include "kernels/noise/noise_cpu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/noise/noise_ref.h"

namespace sluice {
namespace {

NoiseParams Params(float mean, float sigma, bool clip) {
  NoiseParams n;
  n.enabled = true;
  n.mean = mean, n.sigma = sigma, n.clip = clip;
  n.key = MakeStreamKey(12345, 1, 7, 3);
  return n;
}

TEST(Noise, NormalsAreStandardNormalAndKeyed) {
  const NoiseParams n = Params(0.f, 1.f, false);
  const int64_t count = 200000;
  double sum = 0, sq = 0;
  int64_t within1 = 0;
  for (int64_t p = 0; p < count; ++p) {
    float z[3];
    noise::Normals(n, p, z);
    for (float v : z) {
      sum += v, sq += static_cast<double>(v) * v;
      within1 += std::fabs(v) < 1.0f;
    }
  }
  const double m = sum / (3.0 * count), var = sq / (3.0 * count) - m * m;
  EXPECT_NEAR(m, 0.0, 0.01);
  EXPECT_NEAR(var, 1.0, 0.01);
  EXPECT_NEAR(static_cast<double>(within1) / (3.0 * count), 0.6827, 0.005);  // P(|z| < 1)
  // Same key, same normals; another sample, others.
  float a[3], b[3], c[3];
  noise::Normals(n, 42, a);
  noise::Normals(n, 42, b);
  NoiseParams other = n;
  other.key = MakeStreamKey(12345, 1, 8, 3);
  noise::Normals(other, 42, c);
  EXPECT_EQ(a[0], b[0]);
  EXPECT_NE(a[0], c[0]);
}

TEST(Noise, CpuFinishMatchesTheOracle) {
  std::mt19937 rng(3);
  const int w = 37, h = 23;
  std::vector<uint8_t> img(static_cast<size_t>(w) * h * 3);
  for (uint8_t& v : img) v = static_cast<uint8_t>(rng());
  const float nm[3] = {0.485f, 0.456f, 0.406f}, ns[3] = {0.229f, 0.224f, 0.225f};
  for (int mode = 0; mode < 6; ++mode) {
    NoiseParams n = Params(mode % 2 ? 0.05f : 0.f, 0.1f + 0.2f * static_cast<float>(mode), mode != 3);
    n.normalize = mode >= 2;
    n.after_normalize = mode >= 4;
    for (int c = 0; c < 3; ++c) n.norm_mean[c] = nm[c], n.norm_std[c] = ns[c];
    std::vector<float> z(img.size());
    for (int64_t p = 0; p < static_cast<int64_t>(w) * h; ++p) noise::Normals(n, p, &z[static_cast<size_t>(p) * 3]);
    const std::vector<float> want = noise_ref::GaussianNoise(img, z, n.mean, n.sigma, n.clip, n.normalize ? nm : nullptr,
                                                             n.normalize ? ns : nullptr, n.after_normalize);
    std::vector<float> got(img.size());
    NoiseFinishCpu(n, ImageView{img.data(), h, w, 3, static_cast<ptrdiff_t>(w) * 3}, DType::kFloat32, Layout::kNHWC,
                   got.data());
    ASSERT_EQ(got, want) << "mode " << mode;
    if (n.clip && !n.normalize) {
      for (float v : got) ASSERT_TRUE(v >= 0.f && v <= 1.f);
    }
  }
}

}  // namespace
}  // namespace sluice
