// Reference filters: torchvision.transforms.v2.functional's uint8 gaussian_blur and
// adjust_sharpness transcribed one whole-image operation at a time (materialized reflect
// padding, the 2-D float32 kernel, the valid convolution, the rounding, the blend with torch's
// fused alpha), independently of the per-pixel kernels.
#ifndef SLUICE_KERNELS_FILTER_FILTER_REF_H_
#define SLUICE_KERNELS_FILTER_FILTER_REF_H_

#include <cmath>
#include <cstdint>
#include <vector>

namespace sluice::filter_ref {

// torch.nn.functional.pad(mode="reflect") of an RGB8 image by (px, py) on each side.
inline std::vector<uint8_t> ReflectPad(const std::vector<uint8_t>& img, int w, int h, int px, int py) {
  const int pw = w + 2 * px, ph = h + 2 * py;
  std::vector<uint8_t> out(static_cast<size_t>(pw) * ph * 3);
  auto mirror = [](int i, int n) {
    if (n == 1) return 0;
    while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;
    return i;
  };
  for (int y = 0; y < ph; ++y)
    for (int x = 0; x < pw; ++x)
      for (int c = 0; c < 3; ++c)
        out[(static_cast<size_t>(y) * pw + x) * 3 + c] =
            img[(static_cast<size_t>(mirror(y - py, h)) * w + mirror(x - px, w)) * 3 + c];
  return out;
}

// gaussian_blur with 1-D kernels wx (width kx) and wy (height ky): the float32 2-D kernel
// wy[i] * wx[j], the convolution (summed in double here), round half to even, clamp.
inline std::vector<uint8_t> GaussianBlur(const std::vector<uint8_t>& img, int w, int h, const std::vector<float>& wx,
                                         const std::vector<float>& wy) {
  const int kx = static_cast<int>(wx.size()), ky = static_cast<int>(wy.size());
  const std::vector<uint8_t> pad = ReflectPad(img, w, h, kx / 2, ky / 2);
  const int pw = w + kx - 1;
  std::vector<uint8_t> out(img.size());
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c) {
        double acc = 0.0;
        for (int i = 0; i < ky; ++i)
          for (int j = 0; j < kx; ++j) {
            const float k2 = wy[static_cast<size_t>(i)] * wx[static_cast<size_t>(j)];
            acc += static_cast<double>(k2) * pad[(static_cast<size_t>(y + i) * pw + (x + j)) * 3 + c];
          }
        const double r = std::nearbyint(acc);
        out[(static_cast<size_t>(y) * w + x) * 3 + c] = static_cast<uint8_t>(r < 0 ? 0 : (r > 255 ? 255 : r));
      }
  return out;
}

// adjust_sharpness(factor): the blurred degenerate image (3x3 kernel 1/13 with 5/13 at the
// centre, float32 weights, rounded) on the interior, the original on the border, then
// clamp(v + (1 - factor) * (blurred - v)) with one float32 rounding, truncated.
inline std::vector<uint8_t> Sharpness(const std::vector<uint8_t>& img, int w, int h, double factor) {
  std::vector<uint8_t> out = img;
  if (w <= 2 || h <= 2) return out;
  const float a = static_cast<float>(1.0 / 13.0), b = static_cast<float>(5.0 / 13.0);
  const float alpha = static_cast<float>(1.0 - factor);
  for (int y = 1; y < h - 1; ++y)
    for (int x = 1; x < w - 1; ++x)
      for (int c = 0; c < 3; ++c) {
        double acc = 0.0;
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx)
            acc += static_cast<double>(dx == 0 && dy == 0 ? b : a) *
                   img[(static_cast<size_t>(y + dy) * w + (x + dx)) * 3 + c];
        const float blurred = static_cast<float>(std::nearbyint(acc));
        const size_t i = (static_cast<size_t>(y) * w + x) * 3 + c;
        const float v = img[i];
        const float r = std::fmaf(alpha, blurred - v, v);
        out[i] = static_cast<uint8_t>(std::fmin(std::fmax(r, 0.0f), 255.0f));
      }
  return out;
}

}  // namespace sluice::filter_ref

#endif  // SLUICE_KERNELS_FILTER_FILTER_REF_H_
