#include "codec/png.h"

#include <gtest/gtest.h>
#include <spng.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace sluice {
namespace {

// PNG files are written with libspng's encoder; the decoder's conversions (gray -> RGB, alpha
// dropped, palette expanded, 16-bit -> high byte) are checked against values computed here.
struct PngSpec {
  int width = 0, height = 0;
  int bit_depth = 8;
  int color_type = SPNG_COLOR_TYPE_TRUECOLOR;
  bool interlaced = false;
  std::vector<spng_plte_entry> palette;
  std::vector<uint8_t> exif;  // TIFF block for an eXIf chunk
};

std::vector<uint8_t> EncodePng(const PngSpec& s, const std::vector<uint8_t>& samples) {
  spng_ctx* enc = spng_ctx_new(SPNG_CTX_ENCODER);
  EXPECT_NE(enc, nullptr);
  spng_set_option(enc, SPNG_ENCODE_TO_BUFFER, 1);
  spng_ihdr ihdr = {static_cast<uint32_t>(s.width), static_cast<uint32_t>(s.height),
                    static_cast<uint8_t>(s.bit_depth), static_cast<uint8_t>(s.color_type), 0, 0,
                    static_cast<uint8_t>(s.interlaced ? 1 : 0)};
  EXPECT_EQ(spng_set_ihdr(enc, &ihdr), 0);
  if (!s.palette.empty()) {
    spng_plte plte;
    std::memset(&plte, 0, sizeof(plte));
    plte.n_entries = static_cast<uint32_t>(s.palette.size());
    for (size_t i = 0; i < s.palette.size(); ++i) plte.entries[i] = s.palette[i];
    EXPECT_EQ(spng_set_plte(enc, &plte), 0);
  }
  if (!s.exif.empty()) {
    spng_exif exif;
    exif.length = s.exif.size();
    exif.data = reinterpret_cast<char*>(const_cast<uint8_t*>(s.exif.data()));
    EXPECT_EQ(spng_set_exif(enc, &exif), 0);
  }
  int e = spng_encode_image(enc, samples.data(), samples.size(), SPNG_FMT_PNG,
                            SPNG_ENCODE_FINALIZE);
  EXPECT_EQ(e, 0) << spng_strerror(e);
  size_t size = 0;
  void* buf = spng_get_png_buffer(enc, &size, &e);
  std::vector<uint8_t> out;
  if (buf != nullptr) out.assign(static_cast<uint8_t*>(buf), static_cast<uint8_t*>(buf) + size);
  std::free(buf);
  spng_ctx_free(enc);
  return out;
}

std::vector<uint8_t> RandomBytes(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(gen());
  return v;
}

std::vector<uint8_t> DecodeOk(const std::vector<uint8_t>& png, const PngSpec& s) {
  Result<ImageInfo> info = PngReadHeader(png.data(), png.size());
  EXPECT_TRUE(info.ok()) << info.status().ToString();
  if (info.ok()) {
    EXPECT_EQ(info->format, ImageFormat::kPng);
    EXPECT_EQ(info->width, s.width);
    EXPECT_EQ(info->height, s.height);
  }
  std::vector<uint8_t> px;
  Result<Rect> r = PngDecode(png.data(), png.size(), &px);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (r.ok()) {
    EXPECT_EQ(*r, (Rect{0, 0, s.width, s.height}));
  }
  EXPECT_EQ(px.size(), static_cast<size_t>(s.width) * s.height * 3);
  return px;
}

TEST(PngTest, Rgb8IsExact) {
  for (bool interlaced : {false, true}) {
    PngSpec s;
    s.width = 37, s.height = 23, s.interlaced = interlaced;
    const std::vector<uint8_t> rgb = RandomBytes(37 * 23 * 3, 1);
    const std::vector<uint8_t> png = EncodePng(s, rgb);
    EXPECT_EQ(PngReadHeader(png.data(), png.size())->components, 3);
    EXPECT_EQ(DecodeOk(png, s), rgb) << (interlaced ? "interlaced" : "");
  }
}

TEST(PngTest, GrayIsReplicated) {
  PngSpec s;
  s.width = 19, s.height = 7, s.color_type = SPNG_COLOR_TYPE_GRAYSCALE;
  const std::vector<uint8_t> gray = RandomBytes(19 * 7, 2);
  const std::vector<uint8_t> png = EncodePng(s, gray);
  EXPECT_EQ(PngReadHeader(png.data(), png.size())->components, 1);
  const std::vector<uint8_t> px = DecodeOk(png, s);
  ASSERT_EQ(px.size(), gray.size() * 3);
  for (size_t i = 0; i < gray.size(); ++i)
    for (int c = 0; c < 3; ++c) ASSERT_EQ(px[3 * i + static_cast<size_t>(c)], gray[i]) << i;
}

TEST(PngTest, AlphaIsDropped) {
  PngSpec s;
  s.width = 11, s.height = 5, s.color_type = SPNG_COLOR_TYPE_TRUECOLOR_ALPHA;
  const std::vector<uint8_t> rgba = RandomBytes(11 * 5 * 4, 3);
  const std::vector<uint8_t> png = EncodePng(s, rgba);
  EXPECT_EQ(PngReadHeader(png.data(), png.size())->components, 4);
  const std::vector<uint8_t> px = DecodeOk(png, s);
  for (size_t i = 0; i < 11 * 5; ++i)
    for (size_t c = 0; c < 3; ++c) ASSERT_EQ(px[3 * i + c], rgba[4 * i + c]) << i;

  PngSpec ga;
  ga.width = 6, ga.height = 4, ga.color_type = SPNG_COLOR_TYPE_GRAYSCALE_ALPHA;
  const std::vector<uint8_t> gray_alpha = RandomBytes(6 * 4 * 2, 4);
  const std::vector<uint8_t> png2 = EncodePng(ga, gray_alpha);
  EXPECT_EQ(PngReadHeader(png2.data(), png2.size())->components, 2);
  const std::vector<uint8_t> px2 = DecodeOk(png2, ga);
  for (size_t i = 0; i < 6 * 4; ++i)
    for (size_t c = 0; c < 3; ++c) ASSERT_EQ(px2[3 * i + c], gray_alpha[2 * i]) << i;
}

TEST(PngTest, PaletteIsExpanded) {
  PngSpec s;
  s.width = 9, s.height = 6, s.color_type = SPNG_COLOR_TYPE_INDEXED;
  s.palette = {{10, 20, 30, 255}, {200, 100, 0, 255}, {1, 2, 3, 255}, {255, 255, 255, 255}};
  std::vector<uint8_t> idx(9 * 6);
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<uint8_t>((i * 5 + i / 9) % 4);
  const std::vector<uint8_t> png = EncodePng(s, idx);
  const std::vector<uint8_t> px = DecodeOk(png, s);
  for (size_t i = 0; i < idx.size(); ++i) {
    const spng_plte_entry& e = s.palette[idx[i]];
    ASSERT_EQ(px[3 * i], e.red) << i;
    ASSERT_EQ(px[3 * i + 1], e.green) << i;
    ASSERT_EQ(px[3 * i + 2], e.blue) << i;
  }
}

// 16-bit files are converted a row at a time (interlaced ones pass by pass).
TEST(PngTest, SixteenBitKeepsHighByte) {
  for (bool interlaced : {false, true})
    for (int color_type : {SPNG_COLOR_TYPE_TRUECOLOR, SPNG_COLOR_TYPE_GRAYSCALE, SPNG_COLOR_TYPE_TRUECOLOR_ALPHA}) {
      PngSpec s;
      s.width = 37, s.height = 21, s.bit_depth = 16, s.color_type = color_type, s.interlaced = interlaced;
      const size_t channels = color_type == SPNG_COLOR_TYPE_TRUECOLOR         ? 3
                              : color_type == SPNG_COLOR_TYPE_TRUECOLOR_ALPHA ? 4
                                                                              : 1;
      const size_t n = static_cast<size_t>(s.width) * s.height;
      // SPNG_FMT_PNG takes host-endian 16-bit samples.
      const std::vector<uint8_t> raw = RandomBytes(n * channels * 2, 5);
      std::vector<uint16_t> samples(n * channels);
      std::memcpy(samples.data(), raw.data(), raw.size());
      const std::vector<uint8_t> png = EncodePng(s, raw);
      const std::vector<uint8_t> px = DecodeOk(png, s);
      for (size_t i = 0; i < n; ++i)
        for (size_t c = 0; c < 3; ++c) {
          const uint16_t v = samples[i * channels + (channels == 1 ? 0 : c)];
          ASSERT_EQ(px[3 * i + c], v >> 8) << "color type " << color_type << " interlaced " << interlaced
                                           << " pixel " << i;
        }
    }
}

TEST(PngTest, ExifOrientationFromExifChunk) {
  PngSpec s;
  s.width = 4, s.height = 2;
  // Little-endian TIFF, one entry: Orientation SHORT 1 = 8.
  s.exif = {'I', 'I', 42, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0};
  const std::vector<uint8_t> png = EncodePng(s, RandomBytes(4 * 2 * 3, 6));
  Result<ImageInfo> info = PngReadHeader(png.data(), png.size());
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->orientation, 8);
  EXPECT_EQ(info->display_width(), 2);

  PngSpec plain;
  plain.width = 4, plain.height = 2;
  const std::vector<uint8_t> png2 = EncodePng(plain, RandomBytes(4 * 2 * 3, 6));
  EXPECT_EQ(PngReadHeader(png2.data(), png2.size())->orientation, 1);
}

// Offset of the end of the last IDAT chunk's data (before its CRC).
size_t EndOfImageData(const std::vector<uint8_t>& png) {
  size_t i = 8, end = 0;
  while (i + 8 <= png.size()) {
    const size_t len = (static_cast<size_t>(png[i]) << 24) | (static_cast<size_t>(png[i + 1]) << 16) |
                       (static_cast<size_t>(png[i + 2]) << 8) | png[i + 3];
    if (std::memcmp(&png[i + 4], "IDAT", 4) == 0) end = i + 8 + len;
    i += 12 + len;
  }
  return end;
}

TEST(PngTest, TruncatedAndDamagedFilesAreCorruptData) {
  PngSpec s;
  s.width = 37, s.height = 23;
  const std::vector<uint8_t> rgb = RandomBytes(37 * 23 * 3, 7);
  const std::vector<uint8_t> png = EncodePng(s, rgb);
  const size_t data_end = EndOfImageData(png);
  ASSERT_GT(data_end, 33u);
  std::vector<uint8_t> px;
  for (size_t n = 0; n < png.size(); ++n) {
    // Exact-size heap copy, so that AddressSanitizer sees reads past the end.
    std::vector<uint8_t> cut(png.begin(), png.begin() + static_cast<ptrdiff_t>(n));
    Result<ImageInfo> info = PngReadHeader(cut.data(), cut.size());
    Result<Rect> r = PngDecode(cut.data(), cut.size(), &px);
    if (n < data_end) {
      ASSERT_FALSE(r.ok()) << "cut at " << n;
      ASSERT_EQ(r.status().code(), StatusCode::kCorruptData) << r.status().ToString();
      if (!info.ok()) {
        ASSERT_EQ(info.status().code(), StatusCode::kCorruptData);
      }
    } else if (r.ok()) {
      // Only the CRC and the IEND chunk are missing: the pixels are complete, as PIL reads them.
      ASSERT_EQ(px, rgb) << "cut at " << n;
    }
  }
  EXPECT_EQ(PngReadHeader(png.data(), 0).status().message(), "empty file");

  // A damaged byte in the header or in the compressed data.
  for (size_t pos : {size_t{16}, size_t{20}, data_end - 40, data_end - 5}) {
    std::vector<uint8_t> bad = png;
    bad[pos] ^= 0x5A;
    Result<Rect> r = PngDecode(bad.data(), bad.size(), &px);
    ASSERT_FALSE(r.ok()) << "damage at " << pos;
    EXPECT_EQ(r.status().code(), StatusCode::kCorruptData);
    EXPECT_NE(r.status().message().find("PNG"), std::string::npos) << r.status().message();
  }
}

}  // namespace
}  // namespace sluice
