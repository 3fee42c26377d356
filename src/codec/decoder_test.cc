#include "codec/decoder.h"

#include <gtest/gtest.h>
#include <webp/encode.h>

#include <cstdint>
#include <string>
#include <vector>

namespace sluice {
namespace {

std::vector<uint8_t> Bytes(const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); }

std::vector<uint8_t> Gradient(int w, int h) {
  std::vector<uint8_t> p(static_cast<size_t>(w) * h * 3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c)
        p[(static_cast<size_t>(y) * w + x) * 3 + c] = static_cast<uint8_t>(x * 4 + y * 2 + c * 50);
  return p;
}

TEST(ImageDecoderTest, RefusesRecognizedButUnsupportedFormats) {
  struct Case {
    std::string bytes;
    const char* name;
  };
  const Case cases[] = {
      {std::string("GIF89a\x10\0\x10\0\x80\0\0", 13), "GIF"},
      {std::string("BM\x46\0\0\0\0\0\0\0\x36\0\0\0", 14), "BMP"},
      {std::string("II*\0\x08\0\0\0\0\0", 10), "TIFF"},
      {std::string("MM\0*\0\0\0\x08\0\0", 10), "TIFF"},
      {std::string("P6\n2 2\n255\n"), "PNM"},
  };
  for (const Case& c : cases) {
    ImageDecoder dec;
    const std::vector<uint8_t> b = Bytes(c.bytes);
    Result<ImageInfo> info = dec.ReadHeader(b.data(), b.size());
    ASSERT_FALSE(info.ok()) << c.name;
    EXPECT_EQ(info.status().code(), StatusCode::kUnsupported) << c.name;
    EXPECT_EQ(info.status().message(),
              std::string(c.name) + " images are not supported (JPEG, PNG and WebP are)");
    // No header, no decode.
    std::vector<uint8_t> px;
    Result<Rect> r = dec.Decode(DecodeRequest{Rect{0, 0, 1, 1}, 1}, &px);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  }
}

TEST(ImageDecoderTest, UnknownAndEmptyInput) {
  ImageDecoder dec;
  Result<ImageInfo> info = dec.ReadHeader(nullptr, 0);
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), StatusCode::kCorruptData);
  EXPECT_EQ(info.status().message(), "empty file");

  const std::vector<uint8_t> html = Bytes("<html>\n<body>");
  info = dec.ReadHeader(html.data(), html.size());
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), StatusCode::kCorruptData);
  // The first 8 bytes in hex and as text, unprintable ones as '.'.
  EXPECT_EQ(info.status().message(),
            "not a recognized image format: the file starts with 3c 68 74 6d 6c 3e 0a 3c "
            "('<html>.<')");

  const std::vector<uint8_t> two = {0x00, 0xFF};
  info = dec.ReadHeader(two.data(), two.size());
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().message(), "not a recognized image format: the file starts with 00 ff ('..')");
}

TEST(ImageDecoderTest, DecodesJpegRegions) {
  const int w = 48, h = 40;
  const std::vector<uint8_t> src = Gradient(w, h);
  Result<std::vector<uint8_t>> jpg =
      EncodeJpeg(ImageView{src.data(), h, w, 3, w * 3}, 95, "444", false, 6);
  ASSERT_TRUE(jpg.ok());
  ImageDecoder dec;
  Result<ImageInfo> info = dec.ReadHeader(jpg->data(), jpg->size());
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->format, ImageFormat::kJpeg);
  EXPECT_EQ(info->orientation, 6);
  std::vector<uint8_t> full, part;
  ASSERT_TRUE(dec.Decode(DecodeRequest{Rect{0, 0, w, h}, 1}, &full).ok());
  ASSERT_TRUE(dec.ReadHeader(jpg->data(), jpg->size()).ok());
  Result<Rect> r = dec.Decode(DecodeRequest{Rect{17, 5, 20, 9}, 1}, &part);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->y, 5);
  EXPECT_EQ(r->h, 9);
  EXPECT_LE(r->x, 17);
  EXPECT_GE(r->x + r->w, 37);
  for (int y = 0; y < r->h; ++y)
    for (int x = 0; x < r->w * 3; ++x)
      ASSERT_EQ(part[static_cast<size_t>(y * r->w * 3 + x)],
                full[static_cast<size_t>((r->y + y) * w * 3 + r->x * 3 + x)]);
  // DCT scaling goes through for JPEG.
  ASSERT_TRUE(dec.ReadHeader(jpg->data(), jpg->size()).ok());
  r = dec.Decode(DecodeRequest{Rect{0, 0, 6, 5}, 8}, &part);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (Rect{0, 0, 6, 5}));
  // A second Decode without a new header is refused.
  r = dec.Decode(DecodeRequest{Rect{0, 0, 6, 5}, 8}, &part);
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
}

TEST(ImageDecoderTest, DecodesWebpWholeAndRefusesDownscaling) {
  const int w = 21, h = 13;
  const std::vector<uint8_t> src = Gradient(w, h);
  uint8_t* out = nullptr;
  const size_t n = WebPEncodeLosslessRGB(src.data(), w, h, w * 3, &out);
  const std::vector<uint8_t> webp(out, out + n);
  WebPFree(out);
  ImageDecoder dec;
  Result<ImageInfo> info = dec.ReadHeader(webp.data(), webp.size());
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->format, ImageFormat::kWebp);
  std::vector<uint8_t> px;
  // A region is asked for; the whole image comes back (WebP has no random access).
  Result<Rect> r = dec.Decode(DecodeRequest{Rect{3, 2, 5, 5}, 1}, &px);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (Rect{0, 0, w, h}));
  EXPECT_EQ(px, src);
  ASSERT_TRUE(dec.ReadHeader(webp.data(), webp.size()).ok());
  r = dec.Decode(DecodeRequest{Rect{0, 0, 5, 5}, 2}, &px);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
}

// PNG's CRC-32 (ISO 3309), bit by bit.
uint32_t Crc32(const uint8_t* p, size_t n) {
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return c ^ 0xFFFFFFFFu;
}

void PutBE32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (24 - 8 * i));
}

// Headers over the pixel limit (178,956,970) are refused before any pixel memory, for every
// format: a PNG's IHDR and a lossless WebP's size field rewritten to claim more.
TEST(ImageDecoderTest, PixelLimitHoldsForEveryFormat) {
  // A 1x1 8-bit gray PNG: signature, IHDR (13 bytes + CRC), IDAT, IEND.
  std::vector<uint8_t> png = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 'I', 'H', 'D', 'R',
                              0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0, 0, 0, 0, 0};
  PutBE32(&png[16], 20000);  // 20000 x 20000 = 400 MP
  PutBE32(&png[20], 20000);
  PutBE32(&png[29], Crc32(&png[12], 17));
  const std::vector<uint8_t> src = Gradient(8, 8);
  uint8_t* out = nullptr;
  const size_t n = WebPEncodeLosslessRGB(src.data(), 8, 8, 8 * 3, &out);
  std::vector<uint8_t> webp(out, out + n);
  WebPFree(out);
  ASSERT_EQ(std::string(webp.begin() + 12, webp.begin() + 16), "VP8L");
  // After the 0x2f signature byte: width-1 (14 bits), height-1 (14 bits), alpha, version.
  uint32_t bits = webp[21] | webp[22] << 8 | webp[23] << 16 | static_cast<uint32_t>(webp[24]) << 24;
  bits = (bits & 0xF0000000u) | 16382u | 16382u << 14;  // 16383 x 16383 = 268 MP
  for (int i = 0; i < 4; ++i) webp[static_cast<size_t>(21 + i)] = static_cast<uint8_t>(bits >> (8 * i));
  const struct {
    std::vector<uint8_t> bytes;
    const char* message;
  } cases[] = {
      {png, "image too large: 20000x20000 pixels exceeds the limit of 178956970"},
      {webp, "image too large: 16383x16383 pixels exceeds the limit of 178956970"},
  };
  for (const auto& c : cases) {
    ImageDecoder dec;
    Result<ImageInfo> info = dec.ReadHeader(c.bytes.data(), c.bytes.size());
    ASSERT_FALSE(info.ok()) << c.message;
    EXPECT_EQ(info.status().code(), StatusCode::kCorruptData);
    EXPECT_EQ(info.status().message(), c.message);
    std::vector<uint8_t> px;
    EXPECT_EQ(dec.Decode(DecodeRequest{Rect{0, 0, 1, 1}, 1}, &px).status().code(), StatusCode::kFailedPrecondition);
    EXPECT_EQ(px.capacity(), 0u);
  }
}

TEST(ImageDecoderTest, FailedHeaderLeavesNothingToDecode) {
  const std::vector<uint8_t> src = Gradient(16, 16);
  Result<std::vector<uint8_t>> jpg = EncodeJpeg(ImageView{src.data(), 16, 16, 3, 48}, 90, "420", false);
  ASSERT_TRUE(jpg.ok());
  ImageDecoder dec;
  ASSERT_TRUE(dec.ReadHeader(jpg->data(), jpg->size()).ok());
  const std::vector<uint8_t> gif = Bytes("GIF89a");
  EXPECT_FALSE(dec.ReadHeader(gif.data(), gif.size()).ok());  // replaces the good header
  std::vector<uint8_t> px;
  Result<Rect> r = dec.Decode(DecodeRequest{Rect{0, 0, 16, 16}, 1}, &px);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace sluice
