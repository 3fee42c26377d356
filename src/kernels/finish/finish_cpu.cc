#include "kernels/finish/finish_cpu.h"

#include "core/half.h"

namespace sluice {

FinishLut FinishLut::Build(const FinishParams& p) {
  FinishLut lut;
  for (int c = 0; c < 3; ++c)
    for (int v = 0; v < 256; ++v) {
      lut.f32[c][v] = NormalizedValue(static_cast<uint8_t>(v), p, c);
      lut.f16[c][v] = FloatToHalfBits(lut.f32[c][v]);
    }
  return lut;
}

namespace {

template <typename T>
void Write(const T (&table)[3][256], Layout layout, const ImageView& in, T* out) {
  const int h = in.height, w = in.width;
  if (layout == Layout::kNHWC) {
    for (int y = 0; y < h; ++y) {
      const uint8_t* src = in.row(y);
      T* dst = out + static_cast<int64_t>(y) * w * 3;
      for (int x = 0; x < w * 3; x += 3) {
        dst[x] = table[0][src[x]];
        dst[x + 1] = table[1][src[x + 1]];
        dst[x + 2] = table[2][src[x + 2]];
      }
    }
    return;
  }
  const int64_t plane = static_cast<int64_t>(h) * w;
  for (int y = 0; y < h; ++y) {
    const uint8_t* src = in.row(y);
    T* r = out + static_cast<int64_t>(y) * w;
    T* g = r + plane;
    T* b = g + plane;
    for (int x = 0; x < w; ++x) {
      r[x] = table[0][src[3 * x]];
      g[x] = table[1][src[3 * x + 1]];
      b[x] = table[2][src[3 * x + 2]];
    }
  }
}

struct IdentityTable {
  uint8_t v[3][256];
  IdentityTable() {
    for (int c = 0; c < 3; ++c)
      for (int i = 0; i < 256; ++i) v[c][i] = static_cast<uint8_t>(i);
  }
};

}  // namespace

void FinishCpu(const FinishParams& p, const FinishLut& lut, const ImageView& in, void* slot) {
  switch (p.dtype) {
    case DType::kFloat32: Write(lut.f32, p.layout, in, static_cast<float*>(slot)); break;
    case DType::kFloat16: Write(lut.f16, p.layout, in, static_cast<uint16_t*>(slot)); break;
    case DType::kUInt8: {
      static const IdentityTable kIdentity;
      Write(kIdentity.v, p.layout, in, static_cast<uint8_t*>(slot));
      break;
    }
    default: break;
  }
}

}  // namespace sluice
