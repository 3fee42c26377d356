// Reference oracle for Cutout (DeVries and Taylor's reference code): a float mask of ones with
// each hole's square [y - length/2, y + length/2) x [x - length/2, x + length/2), clipped to
// the image, set to zero, multiplied into a CHW image.
//
// Thread-safety: pure functions.
#ifndef SLUICE_KERNELS_ERASE_ERASE_REF_H_
#define SLUICE_KERNELS_ERASE_ERASE_REF_H_

#include <algorithm>
#include <utility>
#include <vector>

namespace sluice::ref {

// centres: (y, x) per hole. img: 3 x h x w floats, changed in place.
inline void CutoutChw(std::vector<float>* img, int h, int w, const std::vector<std::pair<int, int>>& centres,
                      int length) {
  std::vector<float> mask(static_cast<size_t>(h) * w, 1.0f);
  for (const auto& [y, x] : centres) {
    const int y1 = std::clamp(y - length / 2, 0, h), y2 = std::clamp(y + length / 2, 0, h);
    const int x1 = std::clamp(x - length / 2, 0, w), x2 = std::clamp(x + length / 2, 0, w);
    for (int i = y1; i < y2; ++i)
      for (int j = x1; j < x2; ++j) mask[static_cast<size_t>(i) * w + j] = 0.0f;
  }
  for (int c = 0; c < 3; ++c)
    for (size_t k = 0; k < mask.size(); ++k) (*img)[c * mask.size() + k] *= mask[k];
}

}  // namespace sluice::ref

#endif  // SLUICE_KERNELS_ERASE_ERASE_REF_H_
