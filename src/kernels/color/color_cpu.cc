#include "kernels/color/color_cpu.h"

namespace sluice {

void ColorMeansCpu(const ColorOps& ops, const ImageView& img, float* means) {
  int k = 0;
  for (int i = 0; i < ops.num_steps; ++i) {
    if (ops.steps[i].kind != ColorKind::kContrast) continue;
    uint64_t sum = 0;
    for (int y = 0; y < img.height; ++y) {
      const uint8_t* row = img.row(y);
      for (int x = 0; x < img.width; ++x) {
        uint8_t px[3] = {row[3 * x], row[3 * x + 1], row[3 * x + 2]};
        color::ApplySteps(ops, i, means, px);  // steps before this one, means found so far
        sum += static_cast<uint64_t>(color::LumaFloor(px));
      }
    }
    means[k++] = color::MeanOf(sum, static_cast<int64_t>(img.height) * img.width);
  }
}

void ApplyColorCpu(const ColorOps& ops, const MutableImageView& img) {
  if (ops.num_steps == 0) return;
  float means[ColorOps::kMaxSteps] = {};
  ColorMeansCpu(ops, img, means);
  for (int y = 0; y < img.height; ++y) {
    uint8_t* row = img.row(y);
    for (int x = 0; x < img.width; ++x) color::ApplySteps(ops, ops.num_steps, means, row + 3 * x);
  }
}

}  // namespace sluice
