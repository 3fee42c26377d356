#include "kernels/filter/elastic.h"

#include <cmath>

#include "kernels/filter/gaussian_kernel.h"

namespace sluice {

namespace {

// torchvision's kernel side for sigma: int(8 * sigma + 1), made odd (at most kMaxTaps).
int KernelSide(float sigma) {
  int k = static_cast<int>(8.0 * sigma + 1.0);
  if (k % 2 == 0) ++k;
  return k < FilterStep::kMaxTaps ? k : FilterStep::kMaxTaps;
}

// One blurred noise plane (`plane`: 0 for x, 1 for y) into field[.. * 2 + plane], times `scale`.
void BlurredPlane(const FilterStep& f, int w, int h, int plane, float scale, std::vector<float>* field,
                  std::vector<double>* scratch) {
  using hd::Add;
  using hd::Mul;
  const size_t n = static_cast<size_t>(w) * h;
  scratch->resize(2 * n);
  double* noise = scratch->data();
  double* rows = scratch->data() + n;
  for (size_t p = 0; p < n; ++p) {  // torch.rand(...) * 2 - 1, from the pixel's Philox block
    const Philox4x32 r = Philox4x32_10(Philox4x32{{static_cast<uint32_t>(p), f.key.op, f.key.sample,
                                                   f.key.epoch ^ 0x3C6EF372u}},
                                       f.key.k0, f.key.k1);
    const float u = static_cast<float>(r.v[plane] >> 8) * 0x1.0p-24f;  // [0, 1) in float32 steps
    noise[p] = static_cast<double>(u * 2.0f - 1.0f);
  }
  const int k = KernelSide(f.elastic_sigma[plane]);  // the plane's own side, both directions
  float wx[FilterStep::kMaxTaps], wy[FilterStep::kMaxTaps];
  GaussianKernel1d(k, f.elastic_sigma[0], wx);
  GaussianKernel1d(k, f.elastic_sigma[1], wy);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      double acc = 0.0;
      for (int j = 0; j < k; ++j)
        acc = Add(acc, Mul(static_cast<double>(wx[j]), noise[static_cast<size_t>(y) * w + filter::Reflect(x + j - k / 2, w)]));
      rows[static_cast<size_t>(y) * w + x] = acc;
    }
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      double acc = 0.0;
      for (int i = 0; i < k; ++i)
        acc = Add(acc, Mul(static_cast<double>(wy[i]), rows[static_cast<size_t>(filter::Reflect(y + i - k / 2, h)) * w + x]));
      (*field)[(static_cast<size_t>(y) * w + x) * 2 + static_cast<size_t>(plane)] = static_cast<float>(acc) * scale;
    }
}

}  // namespace

void ElasticDisplacement(const FilterStep& f, int w, int h, std::vector<float>* field, std::vector<double>* scratch) {
  field->resize(static_cast<size_t>(w) * h * 2);
  BlurredPlane(f, w, h, 0, f.elastic_alpha[0] / static_cast<float>(h), field, scratch);
  BlurredPlane(f, w, h, 1, f.elastic_alpha[1] / static_cast<float>(w), field, scratch);
}

void ElasticCpu(const FilterStep& f, const ImageView& in, const MutableImageView& out, std::vector<double>* scratch) {
  const int w = in.width, h = in.height;
  thread_local std::vector<float> field;
  ElasticDisplacement(f, w, h, &field, scratch);
  const auto fetch = [&in](int x, int y, uint8_t* px) {
    const uint8_t* p = in.row(y) + 3 * x;
    px[0] = p[0], px[1] = p[1], px[2] = p[2];
  };
  WarpParams p = f.warp;
  p.src_w = p.out_w = w, p.src_h = p.out_h = h;
  const float hw = 0.5f * static_cast<float>(w), hh = 0.5f * static_cast<float>(h);
  for (int y = 0; y < h; ++y) {
    const float by = (2.0f * static_cast<float>(y) + 1.0f) / static_cast<float>(h) - 1.0f;
    for (int x = 0; x < w; ++x) {
      const float bx = (2.0f * static_cast<float>(x) + 1.0f) / static_cast<float>(w) - 1.0f;
      const float* d = field.data() + (static_cast<size_t>(y) * w + x) * 2;
      const double sx = std::fmaf(bx + d[0] + 1.0f, hw, -0.5f), sy = std::fmaf(by + d[1] + 1.0f, hh, -0.5f);
      SamplePoint(p, sx, sy, fetch, out.row(y) + 3 * x);
    }
  }
}

}  // namespace sluice
