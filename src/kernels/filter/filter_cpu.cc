#include "kernels/filter/filter_cpu.h"

#include "kernels/filter/elastic.h"

#include <vector>

namespace sluice {

namespace {

// Separable blur: each row's horizontal sums once, then the columns; the same products and sums,
// in the same order, as filter::BlurPixel, so the bytes are the same.
void BlurCpu(const FilterStep& f, const ImageView& in, const MutableImageView& out, std::vector<double>* scratch) {
  using hd::Add;
  using hd::Mul;
  const int w = in.width, h = in.height;
  std::vector<double>& rows = *scratch;
  rows.resize(static_cast<size_t>(w) * h * 3);
  for (int y = 0; y < h; ++y) {
    const uint8_t* src = in.row(y);
    double* dst = rows.data() + static_cast<size_t>(y) * w * 3;
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c) {
        double acc = 0.0;
        for (int j = 0; j < f.kx; ++j)
          acc = Add(acc, Mul(static_cast<double>(f.wx[j]), static_cast<double>(src[3 * filter::Reflect(x + j - f.kx / 2, w) + c])));
        dst[3 * x + c] = acc;
      }
  }
  for (int y = 0; y < h; ++y) {
    uint8_t* dst = out.row(y);
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c) {
        double acc = 0.0;
        for (int i = 0; i < f.ky; ++i) {
          const int yy = filter::Reflect(y + i - f.ky / 2, h);
          acc = Add(acc, Mul(static_cast<double>(f.wy[i]), rows[(static_cast<size_t>(yy) * w + x) * 3 + c]));
        }
        dst[3 * x + c] = filter::RoundToU8(acc);
      }
  }
}

}  // namespace

void FilterCpu(const FilterStep& f, const ImageView& in, const MutableImageView& out, std::vector<double>* scratch) {
  if (f.kind == FilterKind::kGaussianBlur) return BlurCpu(f, in, out, scratch);
  if (f.kind == FilterKind::kElastic) return ElasticCpu(f, in, out, scratch);
  const auto fetch = [&in](int x, int y, uint8_t* px) {
    const uint8_t* p = in.row(y) + 3 * x;
    px[0] = p[0], px[1] = p[1], px[2] = p[2];
  };
  for (int y = 0; y < out.height; ++y) {
    uint8_t* row = out.row(y);
    for (int x = 0; x < out.width; ++x) filter::FilterPixel(f, in.width, in.height, x, y, fetch, row + 3 * x);
  }
}

}  // namespace sluice
