// Writes N small photo-like JPEGs into DIR/class_a and DIR/class_b (test data for the example).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

#include "codec/jpeg_cpu.h"
#include "core/rng.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s DIR N\n", argv[0]);
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  const int n = std::atoi(argv[2]);
  for (int i = 0; i < n; ++i) {
    const int w = 240 + 16 * (i % 5), h = 180 + 8 * (i % 3);
    sluice::SampleRng rng(7, 0, static_cast<uint64_t>(i), 0);
    std::vector<uint8_t> px(static_cast<size_t>(w) * h * 3);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        for (int c = 0; c < 3; ++c) {
          const double v = 128 + 60 * std::sin(0.05 * x * (c + 1) + 0.03 * y) +
                           ((x / 20 + y / 20) % 2 ? 30 : -30) + rng.Uniform(-8, 8);
          px[(static_cast<size_t>(y) * w + x) * 3 + c] =
              static_cast<uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v));
        }
    sluice::ImageView view{px.data(), h, w, 3, static_cast<ptrdiff_t>(w) * 3};
    auto jpeg = sluice::EncodeJpeg(view, 90, "420", i % 4 == 3);
    if (!jpeg.ok()) {
      std::fprintf(stderr, "%s\n", jpeg.status().message().c_str());
      return 1;
    }
    const std::filesystem::path sub = dir / (i % 2 ? "class_b" : "class_a");
    std::filesystem::create_directories(sub);
    char name[32];
    std::snprintf(name, sizeof(name), "img_%03d.jpg", i);
    std::ofstream(sub / name, std::ios::binary)
        .write(reinterpret_cast<const char*>(jpeg->data()), static_cast<std::streamsize>(jpeg->size()));
  }
  return 0;
}
