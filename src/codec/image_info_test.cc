#include "codec/image_info.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sluice {
namespace {

ImageFormat Sniff(const std::string& bytes) {
  return SniffFormat(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

TEST(ImageInfoTest, SniffsEachFormatFromItsSignature) {
  EXPECT_EQ(Sniff(std::string("\xFF\xD8\xFF\xE0\x00\x10JFIF", 10)), ImageFormat::kJpeg);
  EXPECT_EQ(Sniff(std::string("\xFF\xD8\xFF", 3)), ImageFormat::kJpeg);
  EXPECT_EQ(Sniff(std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16)), ImageFormat::kPng);
  EXPECT_EQ(Sniff(std::string("RIFF\x24\0\0\0WEBPVP8L", 16)), ImageFormat::kWebp);
  EXPECT_EQ(Sniff("GIF89a\x01\0"), ImageFormat::kGif);
  EXPECT_EQ(Sniff("GIF87a"), ImageFormat::kGif);
  EXPECT_EQ(Sniff(std::string("BM\x36\0\0\0", 6)), ImageFormat::kBmp);
  EXPECT_EQ(Sniff(std::string("II*\0\x08\0\0\0", 8)), ImageFormat::kTiff);
  EXPECT_EQ(Sniff(std::string("MM\0*\0\0\0\x08", 8)), ImageFormat::kTiff);
  EXPECT_EQ(Sniff("P6\n3 2\n255\n"), ImageFormat::kPnm);
  EXPECT_EQ(Sniff("P1\n"), ImageFormat::kPnm);
  EXPECT_EQ(Sniff("P7\n"), ImageFormat::kPnm);
}

TEST(ImageInfoTest, NearMissesAndShortInputsAreUnknown) {
  EXPECT_EQ(Sniff(""), ImageFormat::kUnknown);
  EXPECT_EQ(Sniff(std::string("\xFF\xD8", 2)), ImageFormat::kUnknown);           // too short
  EXPECT_EQ(Sniff(std::string("\xFF\xD8\x00", 3)), ImageFormat::kUnknown);       // no marker
  EXPECT_EQ(Sniff(std::string("\x89PNG\r\n\x1a", 7)), ImageFormat::kUnknown);    // 7 of 8
  EXPECT_EQ(Sniff(std::string("\x89PNG\n\r\x1a\n", 8)), ImageFormat::kUnknown);  // swapped
  EXPECT_EQ(Sniff(std::string("RIFF\0\0\0\0WAVE", 12)), ImageFormat::kUnknown);  // audio
  EXPECT_EQ(Sniff(std::string("RIFF\0\0\0\0WEB", 11)), ImageFormat::kUnknown);
  EXPECT_EQ(Sniff("GIF9"), ImageFormat::kUnknown);
  EXPECT_EQ(Sniff("B"), ImageFormat::kUnknown);
  EXPECT_EQ(Sniff(std::string("II+\0", 4)), ImageFormat::kUnknown);
  EXPECT_EQ(Sniff("P8"), ImageFormat::kUnknown);
  EXPECT_EQ(Sniff("P0"), ImageFormat::kUnknown);
  EXPECT_EQ(Sniff("<html>"), ImageFormat::kUnknown);
}

TEST(ImageInfoTest, FormatNames) {
  EXPECT_STREQ(ImageFormatName(ImageFormat::kJpeg), "JPEG");
  EXPECT_STREQ(ImageFormatName(ImageFormat::kPng), "PNG");
  EXPECT_STREQ(ImageFormatName(ImageFormat::kWebp), "WebP");
  EXPECT_STREQ(ImageFormatName(ImageFormat::kGif), "GIF");
  EXPECT_STREQ(ImageFormatName(ImageFormat::kBmp), "BMP");
  EXPECT_STREQ(ImageFormatName(ImageFormat::kTiff), "TIFF");
  EXPECT_STREQ(ImageFormatName(ImageFormat::kPnm), "PNM");
  EXPECT_STREQ(ImageFormatName(ImageFormat::kUnknown), "unknown");
}

TEST(ImageInfoTest, ScaleDenominatorsAndScaledSize) {
  EXPECT_EQ(MaxScaleDenom(ImageFormat::kJpeg), 8);
  EXPECT_EQ(MaxScaleDenom(ImageFormat::kPng), 1);
  EXPECT_EQ(MaxScaleDenom(ImageFormat::kWebp), 1);
  // libjpeg rounds scaled sizes up: ceil(size / denom).
  EXPECT_EQ(ScaledSize(500, 1), 500);
  EXPECT_EQ(ScaledSize(500, 2), 250);
  EXPECT_EQ(ScaledSize(501, 2), 251);
  EXPECT_EQ(ScaledSize(375, 4), 94);
  EXPECT_EQ(ScaledSize(375, 8), 47);
  EXPECT_EQ(ScaledSize(1, 8), 1);
  EXPECT_EQ(ScaledSize(8, 8), 1);
  EXPECT_EQ(ScaledSize(9, 8), 2);
}

TEST(ImageInfoTest, DisplaySizeSwapsForTransposingOrientations) {
  ImageInfo info;
  info.width = 640;
  info.height = 480;
  for (int o = 1; o <= 8; ++o) {
    info.orientation = o;
    EXPECT_EQ(info.transposed(), o >= 5) << o;
    EXPECT_EQ(info.display_width(), o >= 5 ? 480 : 640) << o;
    EXPECT_EQ(info.display_height(), o >= 5 ? 640 : 480) << o;
  }
}

}  // namespace
}  // namespace sluice
