#include "codec/jpeg_cpu.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

// clang-format off
#include <jpeglib.h>
// clang-format on

#include "codec/decoder.h"

namespace sluice {
namespace {

// A smooth test picture (JPEG-friendly, so quality bounds stay tight) with detail in every
// channel, so that misplaced rows, columns or channels show up.
std::vector<uint8_t> MakePicture(int w, int h, int channels) {
  std::vector<uint8_t> p(static_cast<size_t>(w) * h * channels);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const double v[3] = {128 + 100 * std::sin(x / 7.0 + y / 11.0),
                           128 + 100 * std::cos(x / 13.0 - y / 5.0),
                           40 + 170.0 * (x + y) / (w + h)};
      for (int c = 0; c < channels; ++c)
        p[(static_cast<size_t>(y) * w + x) * channels + c] = static_cast<uint8_t>(std::lround(v[c]));
    }
  return p;
}

ImageView View(const std::vector<uint8_t>& p, int w, int h, int channels) {
  return ImageView{p.data(), h, w, channels, static_cast<ptrdiff_t>(w) * channels};
}

double Psnr(const uint8_t* a, const uint8_t* b, size_t n) {
  double se = 0;
  for (size_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(a[i]) - b[i];
    se += d * d;
  }
  if (se == 0) return 99.0;
  return 10 * std::log10(255.0 * 255.0 * static_cast<double>(n) / se);
}

// A libjpeg compression into memory, for the files EncodeJpeg cannot make: set the fields after
// Begin() (colour space, defaults, scan script), write rows, then Finish() returns the file.
struct MemoryCompressor {
  jpeg_compress_struct c;
  jpeg_error_mgr err;
  unsigned char* out = nullptr;
  unsigned long out_size = 0;

  void Begin(int w, int h, int components) {
    c.err = jpeg_std_error(&err);
    jpeg_create_compress(&c);
    jpeg_mem_dest(&c, &out, &out_size);
    c.image_width = static_cast<JDIMENSION>(w);
    c.image_height = static_cast<JDIMENSION>(h);
    c.input_components = components;
  }
  std::vector<uint8_t> Finish() {
    jpeg_finish_compress(&c);
    std::vector<uint8_t> bytes(out, out + out_size);
    jpeg_destroy_compress(&c);
    std::free(out);
    return bytes;
  }
};

std::vector<uint8_t> Encode(const std::vector<uint8_t>& px, int w, int h, int channels,
                            const char* sub, bool progressive, int orientation = 1,
                            int quality = 95) {
  Result<std::vector<uint8_t>> r =
      EncodeJpeg(View(px, w, h, channels), quality, sub, progressive, orientation);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : std::vector<uint8_t>();
}

struct Decoded {
  Rect rect;
  std::vector<uint8_t> px;
};

Decoded DecodeOk(JpegDecoder& dec, const std::vector<uint8_t>& bytes, Rect roi, int denom = 1) {
  Decoded d;
  Result<ImageInfo> info = dec.ReadHeader(bytes.data(), bytes.size());
  EXPECT_TRUE(info.ok()) << info.status().ToString();
  if (!info.ok()) return d;
  Result<Rect> r = dec.Decode(DecodeRequest{roi, denom}, &d.px);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (r.ok()) d.rect = *r;
  return d;
}

// The status of ReadHeader, or of Decode (whole image) when the header parsed.
Status HeaderThenDecode(JpegDecoder& dec, const uint8_t* data, size_t size) {
  Result<ImageInfo> info = dec.ReadHeader(data, size);
  if (!info.ok()) return info.status();
  std::vector<uint8_t> px;
  Result<Rect> r = dec.Decode(DecodeRequest{Rect{0, 0, info->width, info->height}, 1}, &px);
  return r.ok() ? Status::OK() : r.status();
}

int HMaxSampling(const char* sub) { return std::string(sub) == "444" ? 1 : 2; }

constexpr int kW = 203, kH = 151;  // not multiples of the iMCU size

struct Variant {
  const char* sub;
  bool progressive;
};
const Variant kVariants[] = {{"444", false}, {"444", true}, {"422", false},
                             {"422", true},  {"420", false}, {"420", true}};

TEST(JpegCpuTest, EncodeDecodeRoundTrip) {
  const std::vector<uint8_t> src = MakePicture(kW, kH, 3);
  for (const Variant& v : kVariants) {
    SCOPED_TRACE(std::string(v.sub) + (v.progressive ? " progressive" : " baseline"));
    const std::vector<uint8_t> jpg = Encode(src, kW, kH, 3, v.sub, v.progressive);
    JpegDecoder dec;
    Result<ImageInfo> info = dec.ReadHeader(jpg.data(), jpg.size());
    ASSERT_TRUE(info.ok()) << info.status().ToString();
    EXPECT_EQ(info->format, ImageFormat::kJpeg);
    EXPECT_EQ(info->width, kW);
    EXPECT_EQ(info->height, kH);
    EXPECT_EQ(info->components, 3);
    EXPECT_EQ(info->progressive, v.progressive);
    EXPECT_STREQ(info->subsampling, v.sub);
    EXPECT_EQ(info->orientation, 1);
    std::vector<uint8_t> px;
    Result<Rect> r = dec.Decode(DecodeRequest{Rect{0, 0, kW, kH}, 1}, &px);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(*r, (Rect{0, 0, kW, kH}));
    ASSERT_EQ(px.size(), src.size());
    // Quality 95 on a smooth picture: measured 43.0 (4:2:0) to 45.4 dB (4:4:4).
    EXPECT_GT(Psnr(px.data(), src.data(), src.size()), 40.0);
  }
}

TEST(JpegCpuTest, GrayscaleIsReplicatedToRgb) {
  const std::vector<uint8_t> src = MakePicture(kW, kH, 1);
  for (bool progressive : {false, true}) {
    const std::vector<uint8_t> jpg = Encode(src, kW, kH, 1, "420", progressive);
    JpegDecoder dec;
    Result<ImageInfo> info = dec.ReadHeader(jpg.data(), jpg.size());
    ASSERT_TRUE(info.ok());
    EXPECT_EQ(info->components, 1);
    EXPECT_STREQ(info->subsampling, "gray");
    Decoded d = DecodeOk(dec, jpg, Rect{0, 0, kW, kH});
    ASSERT_EQ(d.px.size(), src.size() * 3);
    std::vector<uint8_t> red(src.size());
    for (size_t i = 0; i < src.size(); ++i) {
      ASSERT_EQ(d.px[3 * i], d.px[3 * i + 1]);
      ASSERT_EQ(d.px[3 * i], d.px[3 * i + 2]);
      red[i] = d.px[3 * i];
    }
    EXPECT_GT(Psnr(red.data(), src.data(), src.size()), 40.0);
  }
}

TEST(JpegCpuTest, ExifOrientationIsReportedNotApplied) {
  const int w = 40, h = 24;
  const std::vector<uint8_t> src = MakePicture(w, h, 3);
  for (int o = 1; o <= 8; ++o) {
    const std::vector<uint8_t> jpg = Encode(src, w, h, 3, "444", false, o);
    JpegDecoder dec;
    Result<ImageInfo> info = dec.ReadHeader(jpg.data(), jpg.size());
    ASSERT_TRUE(info.ok());
    EXPECT_EQ(info->orientation, o);
    EXPECT_EQ(info->width, w);
    EXPECT_EQ(info->height, h);
    EXPECT_EQ(info->display_width(), o >= 5 ? h : w);
    EXPECT_EQ(info->display_height(), o >= 5 ? w : h);
    Decoded d = DecodeOk(dec, jpg, Rect{0, 0, w, h});
    ASSERT_EQ(d.px.size(), src.size());
    EXPECT_GT(Psnr(d.px.data(), src.data(), src.size()), 40.0) << "stored pixels, orientation " << o;
  }
}

// ROI decoding: the returned rectangle keeps the requested rows, covers the requested columns,
// starts on an iMCU column boundary (8/denom pixels times the horizontal sampling factor) at
// most one iMCU left of the request (the decoder asks for one spare column each side), ends at
// most one column right of it, and holds the same pixels as a full decode at the same scale.
//
// Tolerance: every pixel inside the requested region must be exact, for every subsampling.
// With chroma subsampling, libjpeg-turbo's fancy upsampling treats the first and last column of
// a cropped row as an image edge: those spare columns outside the request may differ (on this
// picture: up to 9 levels at full scale, 27 at 1/4 with 4:2:2); with 4:4:4 and grayscale the
// whole returned region is exact.
constexpr int kMaxSpareColumnDiff = 32;

void CheckRoiAgainstFullDecode(const char* sub, int channels, bool progressive, int denom) {
  SCOPED_TRACE(std::string(sub) + " channels=" + std::to_string(channels) +
               (progressive ? " progressive" : "") + " 1/" + std::to_string(denom));
  const std::vector<uint8_t> src = MakePicture(kW, kH, channels);
  const std::vector<uint8_t> jpg = Encode(src, kW, kH, channels, sub, progressive);
  const int sw = (kW + denom - 1) / denom, sh = (kH + denom - 1) / denom;
  JpegDecoder dec;
  const Decoded full = DecodeOk(dec, jpg, Rect{0, 0, sw, sh}, denom);
  ASSERT_EQ(full.rect, (Rect{0, 0, sw, sh}));
  const bool exact = channels == 1 || std::string(sub) == "444";
  const int align = (8 / denom) * (channels == 1 ? 1 : HMaxSampling(sub));
  std::mt19937 gen(static_cast<unsigned>(denom * 131 + channels));
  int spare_max = 0;
  for (int iter = 0; iter < 60; ++iter) {
    Rect roi;
    roi.x = static_cast<int>(gen() % static_cast<unsigned>(sw));
    roi.y = static_cast<int>(gen() % static_cast<unsigned>(sh));
    roi.w = 1 + static_cast<int>(gen() % static_cast<unsigned>(sw - roi.x));
    roi.h = 1 + static_cast<int>(gen() % static_cast<unsigned>(sh - roi.y));
    if (iter == 0) roi = Rect{0, 0, sw, sh};
    if (iter == 1) roi = Rect{sw - 1, sh - 1, 1, 1};
    if (iter == 2) roi = Rect{align, 1, align, 2};  // aligned start
    const Decoded d = DecodeOk(dec, jpg, roi, denom);
    const Rect r = d.rect;
    SCOPED_TRACE("roi " + std::to_string(roi.x) + "," + std::to_string(roi.y) + " " +
                 std::to_string(roi.w) + "x" + std::to_string(roi.h) + " -> " +
                 std::to_string(r.x) + " " + std::to_string(r.w));
    ASSERT_EQ(r.y, roi.y);
    ASSERT_EQ(r.h, roi.h);
    ASSERT_LE(r.x, roi.x);
    ASSERT_GE(r.x, roi.x - align);
    ASSERT_EQ(r.x % align, 0) << "start not on an iMCU boundary (" << align << ")";
    ASSERT_GE(r.x + r.w, roi.x + roi.w);
    ASSERT_LE(r.x + r.w, std::min(sw, roi.x + roi.w + 1));
    ASSERT_EQ(d.px.size(), static_cast<size_t>(r.w) * r.h * 3);
    for (int y = 0; y < r.h; ++y)
      for (int x = r.x; x < r.x + r.w; ++x)
        for (int c = 0; c < 3; ++c) {
          const int a = d.px[(static_cast<size_t>(y) * r.w + (x - r.x)) * 3 + c];
          const int b = full.px[(static_cast<size_t>(r.y + y) * sw + x) * 3 + c];
          const bool inside = x >= roi.x && x < roi.x + roi.w;
          if (exact || inside) {
            ASSERT_EQ(a, b) << "column " << x << " row " << r.y + y << " channel " << c;
          } else {
            spare_max = std::max(spare_max, std::abs(a - b));
          }
        }
  }
  EXPECT_LE(spare_max, kMaxSpareColumnDiff);
}

TEST(JpegCpuTest, RoiEqualsFullDecodeExactly444AndGray) {
  for (int denom : {1, 2, 4, 8}) {
    CheckRoiAgainstFullDecode("444", 3, false, denom);
    CheckRoiAgainstFullDecode("444", 1, false, denom);
  }
  CheckRoiAgainstFullDecode("444", 3, true, 1);
}

TEST(JpegCpuTest, RoiEqualsFullDecodeInsideTheRequestWhenSubsampled) {
  for (int denom : {1, 2, 4, 8}) {
    CheckRoiAgainstFullDecode("420", 3, false, denom);
    CheckRoiAgainstFullDecode("422", 3, false, denom);
  }
  CheckRoiAgainstFullDecode("420", 3, true, 1);
}

TEST(JpegCpuTest, ScaledDecodeSizeAndContent) {
  struct Size {
    int w, h;
  };
  for (Size s : {Size{kW, kH}, Size{64, 48}, Size{17, 9}, Size{1, 1}, Size{9, 100}}) {
    const std::vector<uint8_t> src = MakePicture(s.w, s.h, 3);
    for (const char* sub : {"444", "422", "420"}) {
      const std::vector<uint8_t> jpg = Encode(src, s.w, s.h, 3, sub, false);
      for (int d : {1, 2, 4, 8}) {
        SCOPED_TRACE(std::to_string(s.w) + "x" + std::to_string(s.h) + " " + sub + " 1/" +
                     std::to_string(d));
        const int sw = (s.w + d - 1) / d, sh = (s.h + d - 1) / d;
        EXPECT_EQ(ScaledSize(s.w, d), sw);
        EXPECT_EQ(ScaledSize(s.h, d), sh);
        JpegDecoder dec;
        // A request one pixel too wide for the scaled image is refused: the scaled size is
        // exactly ceil(size / d).
        ASSERT_TRUE(dec.ReadHeader(jpg.data(), jpg.size()).ok());
        std::vector<uint8_t> px;
        Result<Rect> too_wide = dec.Decode(DecodeRequest{Rect{0, 0, sw + 1, sh}, d}, &px);
        ASSERT_FALSE(too_wide.ok());
        EXPECT_EQ(too_wide.status().code(), StatusCode::kInvalidArgument);
        const Decoded got = DecodeOk(dec, jpg, Rect{0, 0, sw, sh}, d);
        ASSERT_EQ(got.rect, (Rect{0, 0, sw, sh}));
        ASSERT_EQ(got.px.size(), static_cast<size_t>(sw) * sh * 3);
        if (s.w < 64) continue;
        // Content: the d x d box average of the source. libjpeg-turbo's 1/4 and 1/8 output for
        // 4:2:2 is much coarser in colour (PIL's draft mode gives the same pixels), so that
        // combination is left out.
        if (std::string(sub) == "422" && d >= 4) continue;
        std::vector<uint8_t> box(got.px.size());
        for (int y = 0; y < sh; ++y)
          for (int x = 0; x < sw; ++x)
            for (int c = 0; c < 3; ++c) {
              double sum = 0;
              int n = 0;
              for (int yy = y * d; yy < std::min(s.h, y * d + d); ++yy)
                for (int xx = x * d; xx < std::min(s.w, x * d + d); ++xx, ++n)
                  sum += src[(static_cast<size_t>(yy) * s.w + xx) * 3 + c];
              box[(static_cast<size_t>(y) * sw + x) * 3 + c] =
                  static_cast<uint8_t>(std::lround(sum / n));
            }
        // Measured >= 43 dB on the 203x151 picture.
        EXPECT_GT(Psnr(got.px.data(), box.data(), box.size()), 36.0);
      }
    }
  }
}

TEST(JpegCpuTest, EmptyAndGarbageInput) {
  JpegDecoder dec;
  Result<ImageInfo> empty = dec.ReadHeader(nullptr, 0);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), StatusCode::kCorruptData);
  EXPECT_EQ(empty.status().message(), "empty file");

  std::mt19937 gen(3);
  for (int iter = 0; iter < 200; ++iter) {
    std::vector<uint8_t> junk(1 + gen() % 2000);
    for (auto& b : junk) b = static_cast<uint8_t>(gen());
    if (iter % 2 == 1 && junk.size() >= 3) junk[0] = 0xFF, junk[1] = 0xD8, junk[2] = 0xFF;
    const Status s = HeaderThenDecode(dec, junk.data(), junk.size());
    ASSERT_FALSE(s.ok()) << "garbage decoded, iteration " << iter;
    ASSERT_EQ(s.code(), StatusCode::kCorruptData) << s.ToString();
  }
  // The decoder is still usable afterwards.
  const std::vector<uint8_t> src = MakePicture(32, 16, 3);
  const std::vector<uint8_t> jpg = Encode(src, 32, 16, 3, "420", false);
  EXPECT_TRUE(HeaderThenDecode(dec, jpg.data(), jpg.size()).ok());
}

// Offset just past the SOS segment: the file's headers without any entropy-coded data.
size_t EndOfFirstScanHeader(const std::vector<uint8_t>& jpg) {
  size_t i = 2;  // after SOI
  while (i + 4 <= jpg.size()) {
    EXPECT_EQ(jpg[i], 0xFF);
    const uint8_t marker = jpg[i + 1];
    const size_t len = (static_cast<size_t>(jpg[i + 2]) << 8) | jpg[i + 3];
    if (marker == 0xDA) return i + 2 + len;
    i += 2 + len;
  }
  ADD_FAILURE() << "no SOS marker";
  return jpg.size();
}

TEST(JpegCpuTest, TruncatedAtHalfMentionsTruncation) {
  const std::vector<uint8_t> src = MakePicture(kW, kH, 3);
  for (const Variant& v : kVariants) {
    SCOPED_TRACE(std::string(v.sub) + (v.progressive ? " progressive" : " baseline"));
    const std::vector<uint8_t> jpg = Encode(src, kW, kH, 3, v.sub, v.progressive);
    const std::vector<uint8_t> half(jpg.begin(), jpg.begin() + static_cast<ptrdiff_t>(jpg.size() / 2));
    JpegDecoder dec;
    ASSERT_TRUE(dec.ReadHeader(half.data(), half.size()).ok());
    std::vector<uint8_t> px;
    Result<Rect> r = dec.Decode(DecodeRequest{Rect{0, 0, kW, kH}, 1}, &px);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kCorruptData);
    EXPECT_NE(r.status().message().find("truncated"), std::string::npos) << r.status().ToString();

    // A region above the cut decodes from data that is present: the missing end-of-image
    // marker still reveals the truncation.
    ASSERT_TRUE(dec.ReadHeader(half.data(), half.size()).ok());
    r = dec.Decode(DecodeRequest{Rect{8, 0, 40, 8}, 1}, &px);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kCorruptData);
    EXPECT_NE(r.status().message().find("truncated"), std::string::npos) << r.status().ToString();

    // Headers only (cut right after the scan header): the header parses, the pixels do not.
    const size_t sos_end = EndOfFirstScanHeader(jpg);
    Result<ImageInfo> info = dec.ReadHeader(jpg.data(), sos_end);
    ASSERT_TRUE(info.ok()) << info.status().ToString();
    EXPECT_EQ(info->width, kW);
    r = dec.Decode(DecodeRequest{Rect{0, 0, kW, kH}, 1}, &px);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kCorruptData);
    EXPECT_NE(r.status().message().find("truncated"), std::string::npos) << r.status().ToString();
  }
}

TEST(JpegCpuTest, EveryTruncationIsCorruptDataMentioningTruncation) {
  // Each cut point of a small file, in the headers or in the entropy-coded data, baseline and
  // progressive (whose later scan headers sit in the middle of the file).
  const std::vector<uint8_t> src = MakePicture(48, 32, 3);
  for (const Variant& v : {Variant{"420", false}, Variant{"444", true}}) {
    const std::vector<uint8_t> jpg = Encode(src, 48, 32, 3, v.sub, v.progressive);
    JpegDecoder dec;
    for (size_t n = 1; n < jpg.size(); ++n) {
      const std::vector<uint8_t> cut(jpg.begin(), jpg.begin() + static_cast<ptrdiff_t>(n));
      const Status s = HeaderThenDecode(dec, cut.data(), cut.size());
      ASSERT_FALSE(s.ok()) << "cut at " << n << " of " << jpg.size();
      ASSERT_EQ(s.code(), StatusCode::kCorruptData) << s.ToString();
      ASSERT_NE(s.message().find("truncated"), std::string::npos)
          << "cut at " << n << " of " << jpg.size() << ": " << s.ToString();
    }
    EXPECT_TRUE(HeaderThenDecode(dec, jpg.data(), jpg.size()).ok());
  }
}

TEST(JpegCpuTest, DamagedDataNeverCrashes) {
  // Random byte damage: the decoder either succeeds or reports CorruptData (run under ASan).
  const std::vector<uint8_t> src = MakePicture(48, 32, 3);
  std::mt19937 gen(99);
  for (const Variant& v : {Variant{"420", false}, Variant{"422", true}}) {
    const std::vector<uint8_t> jpg = Encode(src, 48, 32, 3, v.sub, v.progressive);
    JpegDecoder dec;
    for (int iter = 0; iter < 300; ++iter) {
      std::vector<uint8_t> bad = jpg;
      const int hits = 1 + static_cast<int>(gen() % 8);
      for (int i = 0; i < hits; ++i) bad[2 + gen() % (bad.size() - 2)] = static_cast<uint8_t>(gen());
      const Status s = HeaderThenDecode(dec, bad.data(), bad.size());
      if (!s.ok()) {
        ASSERT_EQ(s.code(), StatusCode::kCorruptData) << s.ToString();
      }
    }
  }
}

// A header claiming 60000 x 60000 pixels (3.6 GP) is refused before any pixel memory is
// allocated, as PIL refuses decompression bombs (ImageDecoder's limit, the same for every
// format); the decoder stays usable afterwards.
TEST(JpegCpuTest, HugeHeaderIsRefused) {
  std::vector<uint8_t> jpeg = Encode(MakePicture(32, 24, 3), 32, 24, 3, "420", false);
  size_t sof = 0;
  for (size_t i = 0; i + 1 < jpeg.size(); ++i)
    if (jpeg[i] == 0xFF && jpeg[i + 1] == 0xC0) {
      sof = i;
      break;
    }
  ASSERT_GT(sof, 0u);
  for (size_t off : {sof + 5, sof + 7}) {  // height, width: 60000 = 0xEA60
    jpeg[off] = 0xEA;
    jpeg[off + 1] = 0x60;
  }
  ImageDecoder decoder;
  for (int round = 0; round < 3; ++round) {
    Result<ImageInfo> info = decoder.ReadHeader(jpeg.data(), jpeg.size());
    ASSERT_FALSE(info.ok());
    EXPECT_EQ(info.status().code(), StatusCode::kCorruptData);
    EXPECT_EQ(info.status().message(),
              "image too large: 60000x60000 pixels exceeds the limit of 178956970");
  }
  const std::vector<uint8_t> good = Encode(MakePicture(32, 24, 3), 32, 24, 3, "420", false);
  ASSERT_TRUE(decoder.ReadHeader(good.data(), good.size()).ok());
}

TEST(JpegCpuTest, MisuseErrors) {
  const std::vector<uint8_t> src = MakePicture(32, 16, 3);
  const std::vector<uint8_t> jpg = Encode(src, 32, 16, 3, "444", false);
  JpegDecoder dec;
  std::vector<uint8_t> px;
  Result<Rect> r = dec.Decode(DecodeRequest{Rect{0, 0, 32, 16}, 1}, &px);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);

  ASSERT_TRUE(dec.ReadHeader(jpg.data(), jpg.size()).ok());
  ASSERT_TRUE(dec.Decode(DecodeRequest{Rect{0, 0, 32, 16}, 1}, &px).ok());
  r = dec.Decode(DecodeRequest{Rect{0, 0, 32, 16}, 1}, &px);  // header consumed
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);

  ASSERT_TRUE(dec.ReadHeader(jpg.data(), jpg.size()).ok());
  r = dec.Decode(DecodeRequest{Rect{0, 0, 11, 6}, 3}, &px);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("1, 2, 4 or 8"), std::string::npos);

  const Rect bad_rois[] = {{0, 0, 33, 16}, {0, 0, 32, 17}, {-1, 0, 4, 4}, {0, -1, 4, 4},
                           {0, 0, 0, 4},   {0, 0, 4, 0},   {30, 0, 3, 1}, {0, 16, 1, 1}};
  for (const Rect& roi : bad_rois) {
    ASSERT_TRUE(dec.ReadHeader(jpg.data(), jpg.size()).ok());
    r = dec.Decode(DecodeRequest{roi, 1}, &px);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("outside"), std::string::npos) << r.status().message();
  }
  // Still works.
  const Decoded d = DecodeOk(dec, jpg, Rect{0, 0, 32, 16});
  EXPECT_GT(Psnr(d.px.data(), src.data(), src.size()), 40.0);
}

TEST(JpegCpuTest, EncodeArgumentErrors) {
  const std::vector<uint8_t> px(16 * 16 * 3, 100);
  auto code = [&](ImageView v, int q, const char* sub) {
    Result<std::vector<uint8_t>> r = EncodeJpeg(v, q, sub, false);
    return r.ok() ? StatusCode::kOk : r.status().code();
  };
  EXPECT_EQ(code(View(px, 16, 16, 3), 90, "444"), StatusCode::kOk);
  EXPECT_EQ(code(View(px, 8, 16, 2), 90, "444"), StatusCode::kInvalidArgument);
  EXPECT_EQ(code(View(px, 16, 16, 3), 0, "444"), StatusCode::kInvalidArgument);
  EXPECT_EQ(code(View(px, 16, 16, 3), 101, "444"), StatusCode::kInvalidArgument);
  EXPECT_EQ(code(View(px, 16, 16, 3), 90, "411"), StatusCode::kInvalidArgument);
  EXPECT_EQ(code(View(px, 0, 16, 3), 90, "444"), StatusCode::kInvalidArgument);
}

// CMYK files cannot be made with EncodeJpeg; write them with libjpeg directly.
std::vector<uint8_t> EncodeCmyk(int w, int h, const uint8_t cmyk[4], bool adobe) {
  MemoryCompressor m;
  m.Begin(w, h, 4);
  jpeg_compress_struct& c = m.c;
  c.in_color_space = JCS_CMYK;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, 100, TRUE);
  c.write_Adobe_marker = adobe ? TRUE : FALSE;
  jpeg_start_compress(&c, TRUE);
  std::vector<uint8_t> row(static_cast<size_t>(w) * 4);
  for (int x = 0; x < w; ++x)
    for (int k = 0; k < 4; ++k) row[static_cast<size_t>(x) * 4 + k] = cmyk[k];
  while (c.next_scanline < c.image_height) {
    JSAMPROW r = row.data();
    jpeg_write_scanlines(&c, &r, 1);
  }
  return m.Finish();
}

TEST(JpegCpuTest, CmykConvertsAsPil) {
  // PIL: Adobe files hold inverted CMYK ("CMYK;I"); then R = (255 - K) - (255 - K) * C / 255.
  // Stored (255, 128, 0, 255) with the Adobe marker means C=0, M=127, Y=255, K=0 -> (255, 128, 0).
  // Stored (255, 128, 0, 128): K=127 -> nk=128 -> (128, 128 - 127*128/255 = 64, 0).
  // Without the marker, stored (0, 127, 255, 0) is taken as is -> (255, 128, 0).
  struct Case {
    uint8_t cmyk[4];
    bool adobe;
    int rgb[3];
  };
  const Case cases[] = {{{255, 128, 0, 255}, true, {255, 128, 0}},
                        {{255, 128, 0, 128}, true, {128, 64, 0}},
                        {{0, 127, 255, 0}, false, {255, 128, 0}},
                        {{0, 0, 0, 255}, false, {0, 0, 0}}};
  for (const Case& k : cases) {
    const std::vector<uint8_t> jpg = EncodeCmyk(24, 16, k.cmyk, k.adobe);
    JpegDecoder dec;
    Result<ImageInfo> info = dec.ReadHeader(jpg.data(), jpg.size());
    ASSERT_TRUE(info.ok()) << info.status().ToString();
    EXPECT_EQ(info->components, 4);
    for (Rect roi : {Rect{0, 0, 24, 16}, Rect{9, 3, 7, 5}}) {
      const Decoded d = DecodeOk(dec, jpg, roi);
      ASSERT_EQ(d.px.size(), static_cast<size_t>(d.rect.w) * d.rect.h * 3);
      for (size_t i = 0; i < d.px.size(); i += 3)
        for (int c = 0; c < 3; ++c)
          ASSERT_NEAR(d.px[i + static_cast<size_t>(c)], k.rgb[c], 1)
              << "cmyk " << int(k.cmyk[0]) << "," << int(k.cmyk[1]) << "," << int(k.cmyk[2])
              << "," << int(k.cmyk[3]) << (k.adobe ? " adobe" : "") << " channel " << c;
    }
  }
}

TEST(JpegCpuTest, BitstreamChecksCatchTruncationAndDamagedScans) {
  const std::vector<uint8_t> px = MakePicture(96, 64, 3);
  const std::vector<uint8_t> good = Encode(px, 96, 64, 3, "420", false);
  EXPECT_TRUE(JpegHasEndMarker(good.data(), good.size()));
  EXPECT_TRUE(JpegScanLooksIntact(good.data(), good.size()));
  // Truncated: no end marker, and the scan runs off the end.
  const std::vector<uint8_t> cut(good.begin(), good.begin() + static_cast<ptrdiff_t>(good.size() / 2));
  EXPECT_FALSE(JpegHasEndMarker(cut.data(), cut.size()));
  EXPECT_FALSE(JpegScanLooksIntact(cut.data(), cut.size()));
  // A marker no scan may hold (FF 3F) in the middle of the entropy-coded data.
  std::vector<uint8_t> bad = good;
  bad[bad.size() / 2] = 0xFF;
  bad[bad.size() / 2 + 1] = 0x3F;
  EXPECT_TRUE(JpegHasEndMarker(bad.data(), bad.size()));
  EXPECT_FALSE(JpegScanLooksIntact(bad.data(), bad.size()));
  // Stuffed bytes and restart markers are fine; the decoder agrees the file is valid.
  std::vector<uint8_t> ok = good;
  ok[ok.size() / 2] = 0xFF;
  ok[ok.size() / 2 + 1] = 0x00;
  EXPECT_TRUE(JpegScanLooksIntact(ok.data(), ok.size()));
  EXPECT_FALSE(JpegScanLooksIntact(good.data(), 3));
}

// A valid progressive JPEG with one scan per DCT coefficient and component (spectral selection
// only): 1 + 63 * channels scans. Written with libjpeg's scan scripts.
std::vector<uint8_t> EncodeOneScanPerCoefficient(const std::vector<uint8_t>& px, int w, int h, int channels) {
  MemoryCompressor m;
  m.Begin(w, h, channels);
  jpeg_compress_struct& c = m.c;
  c.in_color_space = channels == 3 ? JCS_RGB : JCS_GRAYSCALE;
  jpeg_set_defaults(&c);
  std::vector<jpeg_scan_info> scans;
  jpeg_scan_info dc{};
  dc.comps_in_scan = channels;
  for (int k = 0; k < channels; ++k) dc.component_index[k] = k;
  scans.push_back(dc);
  for (int k = 0; k < channels; ++k)
    for (int coef = 1; coef < 64; ++coef) {
      jpeg_scan_info ac{};
      ac.comps_in_scan = 1;
      ac.component_index[0] = k;
      ac.Ss = ac.Se = coef;
      scans.push_back(ac);
    }
  c.scan_info = scans.data();
  c.num_scans = static_cast<int>(scans.size());
  jpeg_start_compress(&c, TRUE);
  while (c.next_scanline < c.image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(px.data() + static_cast<size_t>(c.next_scanline) * w * channels);
    jpeg_write_scanlines(&c, &row, 1);
  }
  return m.Finish();
}

// 64 scans (gray) decode; 190 (colour), over kMaxJpegScans, are refused while decoding, and the
// marker walk counts them without decoding.
TEST(JpegCpuTest, TooManyScansAreRefused) {
  static_assert(kMaxJpegScans >= 64 && kMaxJpegScans < 190);
  for (int channels : {1, 3}) {
    const std::vector<uint8_t> px = MakePicture(64, 48, channels);
    const std::vector<uint8_t> jpg = EncodeOneScanPerCoefficient(px, 64, 48, channels);
    EXPECT_EQ(JpegScanCount(jpg.data(), jpg.size()), 1 + 63 * channels);
    JpegDecoder dec;
    const Status s = HeaderThenDecode(dec, jpg.data(), jpg.size());
    if (channels == 1) {
      EXPECT_TRUE(s.ok()) << s.ToString();
    } else {
      EXPECT_EQ(s.code(), StatusCode::kCorruptData);
      EXPECT_EQ(s.message(), "corrupt JPEG data: more than 100 scans (a progressive JPEG has about 10)");
    }
  }
  const std::vector<uint8_t> baseline = Encode(MakePicture(32, 24, 3), 32, 24, 3, "420", false);
  EXPECT_EQ(JpegScanCount(baseline.data(), baseline.size()), 1);
}

}  // namespace
}  // namespace sluice
