#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/half.h"
#include "kernels/finish/finish_cpu.h"
#include "kernels/finish/finish_params.h"
#include "kernels/finish/finish_ref.h"

namespace sluice {
namespace {

// An RGB image whose rows are padded (row_stride > width * 3) so that stride handling counts.
struct Padded {
  int w, h;
  ptrdiff_t stride;
  std::vector<uint8_t> buf;
  ImageView view() const { return ImageView{buf.data(), h, w, 3, stride}; }
};

Padded RandomPadded(int w, int h, unsigned seed) {
  std::mt19937 gen(seed);
  Padded p{w, h, static_cast<ptrdiff_t>(w) * 3 + 5, {}};
  p.buf.resize(static_cast<size_t>(p.stride) * h);
  for (auto& b : p.buf) b = static_cast<uint8_t>(gen());
  // Every value appears in every channel somewhere (the tables are fully exercised).
  for (int i = 0; i < 256 && i < w * h; ++i)
    for (int c = 0; c < 3; ++c)
      p.buf[static_cast<size_t>(i / w) * static_cast<size_t>(p.stride) + static_cast<size_t>(i % w) * 3 + c] =
          static_cast<uint8_t>(i + c * 85);
  return p;
}

std::vector<uint8_t> RunCpu(const FinishParams& p, const ImageView& in) {
  std::vector<uint8_t> out(static_cast<size_t>(in.width) * in.height * 3 * DTypeSize(p.dtype), 0xAB);
  const FinishLut lut = FinishLut::Build(p);
  FinishCpu(p, lut, in, out.data());
  return out;
}

std::vector<uint8_t> RunRef(const FinishParams& p, const ImageView& in) {
  std::vector<uint8_t> out(static_cast<size_t>(in.width) * in.height * 3 * DTypeSize(p.dtype), 0x11);
  FinishRef(p, in, out.data());
  return out;
}

TEST(NormalizeTest, CpuEqualsReferenceExactly) {
  const Padded img = RandomPadded(23, 17, 1);
  for (DType dtype : {DType::kUInt8, DType::kFloat16, DType::kFloat32})
    for (Layout layout : {Layout::kNCHW, Layout::kNHWC})
      for (bool normalize : {false, true}) {
        if (dtype == DType::kUInt8 && normalize) continue;
        FinishParams p;
        p.dtype = dtype;
        p.layout = layout;
        p.normalize = normalize;
        const float mean[3] = {0.485f, 0.456f, 0.406f}, std[3] = {0.229f, 0.224f, 0.225f};
        for (int c = 0; c < 3; ++c) p.mean[c] = mean[c], p.std[c] = std[c];
        // Byte-for-byte: float bits included.
        EXPECT_EQ(RunCpu(p, img.view()), RunRef(p, img.view()))
            << DTypeName(dtype) << " " << LayoutName(layout) << (normalize ? " normalized" : "");
      }
}

TEST(NormalizeTest, LayoutsPlaceValuesWhereExpected) {
  // uint8 output is the raw value: check both layouts by index, independently of SlotOffset.
  const Padded img = RandomPadded(5, 4, 2);
  FinishParams p;
  p.dtype = DType::kUInt8;
  p.layout = Layout::kNCHW;
  const std::vector<uint8_t> nchw = RunCpu(p, img.view());
  p.layout = Layout::kNHWC;
  const std::vector<uint8_t> nhwc = RunCpu(p, img.view());
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 5; ++x)
      for (int c = 0; c < 3; ++c) {
        const uint8_t v = img.buf[static_cast<size_t>(y) * static_cast<size_t>(img.stride) + static_cast<size_t>(x) * 3 + c];
        EXPECT_EQ(nchw[static_cast<size_t>(c * 20 + y * 5 + x)], v);
        EXPECT_EQ(nhwc[static_cast<size_t>(y * 15 + x * 3 + c)], v);
      }
}

TEST(NormalizeTest, HandComputedValues) {
  // ImageNet statistics on one pixel (0, 128, 255):
  //   R: (0/255 - 0.485) / 0.229     = -2.1179039
  //   G: (128/255 - 0.456) / 0.224   =  0.2051822
  //   B: (255/255 - 0.406) / 0.225   =  2.6400000
  const uint8_t px[3] = {0, 128, 255};
  const ImageView in{px, 1, 1, 3, 3};
  FinishParams p;
  p.normalize = true;
  p.mean[0] = 0.485f, p.mean[1] = 0.456f, p.mean[2] = 0.406f;
  p.std[0] = 0.229f, p.std[1] = 0.224f, p.std[2] = 0.225f;
  for (Layout layout : {Layout::kNCHW, Layout::kNHWC}) {
    p.layout = layout;
    p.dtype = DType::kFloat32;
    std::vector<uint8_t> out = RunCpu(p, in);
    float f[3];
    std::memcpy(f, out.data(), sizeof(f));
    EXPECT_NEAR(f[0], -2.1179039f, 1e-6);
    EXPECT_NEAR(f[1], 0.2051822f, 1e-6);
    EXPECT_NEAR(f[2], 2.6400000f, 1e-6);
    // float16: 2.64 lies between 2.638671875 (0x4147) and 2.640625 (0x4148); nearer the latter.
    // -2.1179 rounds to -2.1171875 (0xC03C); 0.2051822 = 1.64146 * 2^-3, mantissa
    // 0.64146 * 1024 = 656.9 -> 657: 0.20520020 (0x3291).
    p.dtype = DType::kFloat16;
    out = RunCpu(p, in);
    uint16_t h[3];
    std::memcpy(h, out.data(), sizeof(h));
    EXPECT_EQ(h[0], 0xC03C);
    EXPECT_EQ(h[1], 0x3291);
    EXPECT_EQ(h[2], 0x4148);
  }
  // Without Normalize: ToTensor's v / 255.
  p.normalize = false;
  p.dtype = DType::kFloat32;
  const std::vector<uint8_t> out = RunCpu(p, in);
  float f[3];
  std::memcpy(f, out.data(), sizeof(f));
  EXPECT_EQ(f[0], 0.0f);
  EXPECT_NEAR(f[1], 0.50196078f, 1e-7);
  EXPECT_EQ(f[2], 1.0f);
}

TEST(NormalizeTest, LutMatchesDefinition) {
  FinishParams p;
  p.normalize = true;
  p.mean[0] = 0.5f, p.mean[1] = 0.25f, p.mean[2] = 0.0f;
  p.std[0] = 0.5f, p.std[1] = 2.0f, p.std[2] = 1.0f;
  const FinishLut lut = FinishLut::Build(p);
  for (int v = 0; v < 256; ++v) {
    // Exact in float: v / 255 is correctly rounded; the rest are exact binary operations.
    const float x = static_cast<float>(v) / 255.0f;
    EXPECT_EQ(lut.f32[0][v], (x - 0.5f) / 0.5f) << v;
    EXPECT_EQ(lut.f32[1][v], (x - 0.25f) / 2.0f) << v;
    EXPECT_EQ(lut.f32[2][v], x) << v;
    EXPECT_EQ(lut.f16[0][v], FloatToHalfBits(lut.f32[0][v])) << v;
  }
  EXPECT_EQ(lut.f32[0][0], -1.0f);
  EXPECT_EQ(lut.f32[0][255], 1.0f);
  EXPECT_EQ(lut.f16[0][255], 0x3C00);

  // torchvision's float32 order of operations, to the bit: ToTensor divides by 255, Normalize
  // subtracts the mean and divides by the std (a multiply by 1/std would differ in the last bit).
  const float mean[3] = {0.485f, 0.456f, 0.406f}, std[3] = {0.229f, 0.224f, 0.225f};
  for (int c = 0; c < 3; ++c) p.mean[c] = mean[c], p.std[c] = std[c];
  const FinishLut imagenet = FinishLut::Build(p);
  int differs_from_reciprocal = 0;
  for (int c = 0; c < 3; ++c)
    for (int v = 0; v < 256; ++v) {
      const float x = static_cast<float>(v) / 255.0f;
      ASSERT_EQ(imagenet.f32[c][v], (x - mean[c]) / std[c]) << c << " " << v;
      differs_from_reciprocal += imagenet.f32[c][v] != (x - mean[c]) * (1.0f / std[c]) ? 1 : 0;
    }
  EXPECT_GT(differs_from_reciprocal, 0);  // the check above can tell the two apart
}

}  // namespace
}  // namespace sluice
