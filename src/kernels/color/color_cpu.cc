#include "kernels/color/color_cpu.h"

#include <algorithm>
#include <cstring>

namespace sluice {

void ColorStatsCpu(const ColorOps& ops, const ImageView& img, ColorStats* st) {
  const int64_t pixels = static_cast<int64_t>(img.height) * img.width;
  for (int i = 0; i < ops.num_steps; ++i) {
    const ColorKind kind = ops.steps[i].kind;
    if (!NeedsStats(kind)) continue;
    uint64_t sum = 0;
    int lo[3] = {255, 255, 255}, hi[3] = {0, 0, 0};
    uint32_t hist[3][256];
    std::memset(hist, 0, sizeof(hist));
    for (int y = 0; y < img.height; ++y) {
      const uint8_t* row = img.row(y);
      for (int x = 0; x < img.width; ++x) {
        uint8_t px[3] = {row[3 * x], row[3 * x + 1], row[3 * x + 2]};
        color::ApplySteps(ops, i, *st, px);  // the steps before this one, with their statistics
        if (kind == ColorKind::kContrast) {
          sum += static_cast<uint64_t>(color::LumaFloor(px));
        } else {
          for (int c = 0; c < 3; ++c) {
            lo[c] = std::min(lo[c], static_cast<int>(px[c]));
            hi[c] = std::max(hi[c], static_cast<int>(px[c]));
            ++hist[c][px[c]];
          }
        }
      }
    }
    if (kind == ColorKind::kContrast) st->mean[i] = color::MeanOf(sum, pixels);
    for (int c = 0; c < 3; ++c) {
      if (kind == ColorKind::kAutoContrast) color::AutoContrastStats(lo[c], hi[c], &st->lo[i][c], &st->inv_scale[i][c]);
      if (kind == ColorKind::kEqualize) color::EqualizeLut(hist[c], pixels, st->lut[i][c]);
    }
  }
}

void ApplyColorCpu(const ColorOps& ops, const MutableImageView& img) {
  if (ops.num_steps == 0) return;
  ColorStats st;
  if (ops.num_stats > 0) ColorStatsCpu(ops, img, &st);
  for (int y = 0; y < img.height; ++y) {
    uint8_t* row = img.row(y);
    for (int x = 0; x < img.width; ++x) color::ApplySteps(ops, ops.num_steps, st, row + 3 * x);
  }
}

}  // namespace sluice
