#include "codec/webp.h"

#include <gtest/gtest.h>
#include <webp/encode.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace sluice {
namespace {

// WebP files are written with libwebp's encoder (lossless: the decoded pixels must be exact).
std::vector<uint8_t> Wrap(uint8_t* out, size_t size) {
  std::vector<uint8_t> v(out, out + size);
  WebPFree(out);
  return v;
}

std::vector<uint8_t> LosslessRgb(const std::vector<uint8_t>& rgb, int w, int h) {
  uint8_t* out = nullptr;
  const size_t n = WebPEncodeLosslessRGB(rgb.data(), w, h, w * 3, &out);
  EXPECT_GT(n, 0u);
  return Wrap(out, n);
}

std::vector<uint8_t> Picture(int w, int h, int channels, unsigned seed) {
  std::mt19937 gen(seed);
  std::vector<uint8_t> p(static_cast<size_t>(w) * h * channels);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < channels; ++c)
        p[(static_cast<size_t>(y) * w + x) * channels + c] =
            c == 3 ? static_cast<uint8_t>(1 + gen() % 255)  // alpha never 0 (keeps RGB exact)
                   : static_cast<uint8_t>((x * 9 + y * 5 + c * 60 + gen() % 8) & 0xFF);
  return p;
}

TEST(WebpTest, LosslessRgbIsExact) {
  const int w = 37, h = 23;
  const std::vector<uint8_t> rgb = Picture(w, h, 3, 1);
  const std::vector<uint8_t> webp = LosslessRgb(rgb, w, h);
  Result<ImageInfo> info = WebpReadHeader(webp.data(), webp.size());
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->format, ImageFormat::kWebp);
  EXPECT_EQ(info->width, w);
  EXPECT_EQ(info->height, h);
  EXPECT_EQ(info->components, 3);
  std::vector<uint8_t> px;
  Result<Rect> r = WebpDecode(webp.data(), webp.size(), &px);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, (Rect{0, 0, w, h}));
  EXPECT_EQ(px, rgb);
}

TEST(WebpTest, AlphaIsDropped) {
  const int w = 16, h = 9;
  const std::vector<uint8_t> rgba = Picture(w, h, 4, 2);
  uint8_t* out = nullptr;
  const size_t n = WebPEncodeLosslessRGBA(rgba.data(), w, h, w * 4, &out);
  const std::vector<uint8_t> webp = Wrap(out, n);
  Result<ImageInfo> info = WebpReadHeader(webp.data(), webp.size());
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->components, 4);
  std::vector<uint8_t> px;
  ASSERT_TRUE(WebpDecode(webp.data(), webp.size(), &px).ok());
  ASSERT_EQ(px.size(), static_cast<size_t>(w) * h * 3);
  for (size_t i = 0; i < static_cast<size_t>(w) * h; ++i)
    for (size_t c = 0; c < 3; ++c) ASSERT_EQ(px[3 * i + c], rgba[4 * i + c]) << i;
}

TEST(WebpTest, LossyIsClose) {
  const int w = 64, h = 48;
  std::vector<uint8_t> rgb(static_cast<size_t>(w) * h * 3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c)
        rgb[(static_cast<size_t>(y) * w + x) * 3 + c] =
            static_cast<uint8_t>(128 + 90 * std::sin(x / (5.0 + c) + y / 9.0));
  uint8_t* out = nullptr;
  const size_t n = WebPEncodeRGB(rgb.data(), w, h, w * 3, 95.0f, &out);
  const std::vector<uint8_t> webp = Wrap(out, n);
  std::vector<uint8_t> px;
  ASSERT_TRUE(WebpDecode(webp.data(), webp.size(), &px).ok());
  ASSERT_EQ(px.size(), rgb.size());
  double se = 0;
  for (size_t i = 0; i < px.size(); ++i) se += (px[i] - rgb[i]) * (px[i] - rgb[i]);
  const double psnr = 10 * std::log10(255.0 * 255.0 * static_cast<double>(px.size()) / se);
  EXPECT_GT(psnr, 30.0);  // lossy 4:2:0 at quality 95 on a smooth picture
}

TEST(WebpTest, TruncatedAndDamagedFilesAreCorruptData) {
  const int w = 37, h = 23;
  const std::vector<uint8_t> rgb = Picture(w, h, 3, 3);
  const std::vector<uint8_t> webp = LosslessRgb(rgb, w, h);
  std::vector<uint8_t> px;
  for (size_t n = 0; n < webp.size(); ++n) {
    const std::vector<uint8_t> cut(webp.begin(), webp.begin() + static_cast<ptrdiff_t>(n));
    Result<Rect> r = WebpDecode(cut.data(), cut.size(), &px);
    ASSERT_FALSE(r.ok()) << "cut at " << n << " of " << webp.size();
    ASSERT_EQ(r.status().code(), StatusCode::kCorruptData) << r.status().ToString();
  }
  EXPECT_EQ(WebpReadHeader(webp.data(), 0).status().message(), "empty file");
  std::vector<uint8_t> bad = webp;
  bad[12] = 'X';  // chunk FourCC "VP8L" -> "XP8L"
  Result<ImageInfo> info = WebpReadHeader(bad.data(), bad.size());
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), StatusCode::kCorruptData);
  EXPECT_EQ(info.status().message(), "corrupt WebP header");
}

}  // namespace
}  // namespace sluice
