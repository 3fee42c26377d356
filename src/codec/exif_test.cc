#include "codec/exif.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

namespace sluice {
namespace {

// Builds a TIFF block: header, then IFD0 at `ifd_offset` with the given entries
// (tag, type, count, value bytes written in the block's byte order).
struct Entry {
  uint16_t tag, type;
  uint32_t count;
  uint32_t value;  // SHORT values sit in the first two bytes of the field, LONG fills it
};

class TiffWriter {
 public:
  explicit TiffWriter(bool little) : little_(little) {}

  std::vector<uint8_t> Build(const std::vector<Entry>& entries, uint32_t ifd_offset = 8,
                             uint16_t magic = 42) {
    std::vector<uint8_t> b;
    b.push_back(little_ ? 'I' : 'M');
    b.push_back(little_ ? 'I' : 'M');
    Put16(&b, magic);
    Put32(&b, ifd_offset);
    while (b.size() < ifd_offset) b.push_back(0xEE);  // filler between header and IFD
    Put16(&b, static_cast<uint16_t>(entries.size()));
    for (const Entry& e : entries) {
      Put16(&b, e.tag);
      Put16(&b, e.type);
      Put32(&b, e.count);
      if (e.type == 3) {
        Put16(&b, static_cast<uint16_t>(e.value));
        Put16(&b, 0);
      } else {
        Put32(&b, e.value);
      }
    }
    Put32(&b, 0);  // no next IFD
    return b;
  }

 private:
  void Put16(std::vector<uint8_t>* b, uint16_t v) const {
    if (little_) {
      b->push_back(static_cast<uint8_t>(v));
      b->push_back(static_cast<uint8_t>(v >> 8));
    } else {
      b->push_back(static_cast<uint8_t>(v >> 8));
      b->push_back(static_cast<uint8_t>(v));
    }
  }
  void Put32(std::vector<uint8_t>* b, uint32_t v) const {
    if (little_) {
      Put16(b, static_cast<uint16_t>(v));
      Put16(b, static_cast<uint16_t>(v >> 16));
    } else {
      Put16(b, static_cast<uint16_t>(v >> 16));
      Put16(b, static_cast<uint16_t>(v));
    }
  }
  bool little_;
};

constexpr uint16_t kOrientation = 0x0112;
constexpr uint16_t kShort = 3, kLong = 4, kAscii = 2;

// Runs the parser on an exact-size heap copy, so that AddressSanitizer sees any read past `n`.
int Parse(const std::vector<uint8_t>& block, size_t n) {
  std::unique_ptr<uint8_t[]> copy(new uint8_t[n == 0 ? 1 : n]);
  if (n > 0) std::memcpy(copy.get(), block.data(), n);
  return ExifOrientationFromTiff(n == 0 ? nullptr : copy.get(), n);
}
int Parse(const std::vector<uint8_t>& block) { return Parse(block, block.size()); }

TEST(ExifTest, HandBuiltLittleEndianBlock) {
  // "II", 42, IFD at 8, one entry: Orientation SHORT 1 = 6.
  const std::vector<uint8_t> block = {'I', 'I', 42, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0,
                                      1,   0,   0,  0, 6, 0, 0, 0, 0, 0, 0,    0};
  EXPECT_EQ(Parse(block), 6);
}

TEST(ExifTest, HandBuiltBigEndianBlock) {
  const std::vector<uint8_t> block = {'M', 'M', 0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3,
                                      0,   0,   0, 1,  0, 8, 0, 0, 0, 0, 0,    0};
  EXPECT_EQ(Parse(block), 8);
}

TEST(ExifTest, EveryOrientationBothByteOrdersShortAndLong) {
  for (bool little : {true, false}) {
    TiffWriter w(little);
    for (uint32_t o = 1; o <= 8; ++o) {
      EXPECT_EQ(Parse(w.Build({{kOrientation, kShort, 1, o}})), static_cast<int>(o))
          << (little ? "II" : "MM") << " SHORT " << o;
      EXPECT_EQ(Parse(w.Build({{kOrientation, kLong, 1, o}})), static_cast<int>(o))
          << (little ? "II" : "MM") << " LONG " << o;
    }
  }
}

TEST(ExifTest, OrientationAmongOtherTagsAndAfterAGap) {
  for (bool little : {true, false}) {
    TiffWriter w(little);
    const std::vector<Entry> entries = {{0x010F, kAscii, 6, 0x100},   // Make (offset)
                                        {0x0110, kAscii, 6, 0x108},   // Model
                                        {kOrientation, kShort, 1, 3},
                                        {0x011A, 5, 1, 0x110}};       // XResolution
    EXPECT_EQ(Parse(w.Build(entries)), 3);
    EXPECT_EQ(Parse(w.Build(entries, 40)), 3);  // IFD further into the block
  }
}

TEST(ExifTest, MissingOrInvalidOrientationGivesOne) {
  for (bool little : {true, false}) {
    TiffWriter w(little);
    EXPECT_EQ(Parse(w.Build({})), 1);
    EXPECT_EQ(Parse(w.Build({{0x010F, kAscii, 4, 0x41424300}})), 1);
    EXPECT_EQ(Parse(w.Build({{kOrientation, kShort, 1, 0}})), 1);
    EXPECT_EQ(Parse(w.Build({{kOrientation, kShort, 1, 9}})), 1);
    EXPECT_EQ(Parse(w.Build({{kOrientation, kLong, 1, 0x10006}})), 1);
    EXPECT_EQ(Parse(w.Build({{kOrientation, kShort, 1, 6}}, 8, 43)), 1);  // bad magic
  }
}

TEST(ExifTest, MalformedHeadersGiveOne) {
  TiffWriter w(true);
  std::vector<uint8_t> block = w.Build({{kOrientation, kShort, 1, 6}});
  ASSERT_EQ(Parse(block), 6);
  std::vector<uint8_t> bad = block;
  bad[0] = 'I', bad[1] = 'M';  // mixed byte order mark
  EXPECT_EQ(Parse(bad), 1);
  bad = block;
  bad[4] = static_cast<uint8_t>(block.size());  // IFD offset at the very end
  EXPECT_EQ(Parse(bad), 1);
  bad = block;
  bad[4] = 0xFF, bad[5] = 0xFF, bad[6] = 0xFF, bad[7] = 0xFF;  // IFD offset 4 GiB
  EXPECT_EQ(Parse(bad), 1);
  bad = block;
  bad[8] = 0xFF, bad[9] = 0xFF;  // 65535 entries in a 26-byte block
  EXPECT_EQ(Parse(bad), 6);     // the first entry is still complete and read
  bad[10] = 0x13;               // ... but now it is another tag: the rest is out of bounds
  EXPECT_EQ(Parse(bad), 1);
  EXPECT_EQ(ExifOrientationFromTiff(nullptr, 0), 1);
}

TEST(ExifTest, EveryTruncationStaysInBounds) {
  for (bool little : {true, false}) {
    TiffWriter w(little);
    const std::vector<Entry> entries = {{0x010F, kAscii, 6, 0x100},
                                        {0x0110, kAscii, 6, 0x108},
                                        {kOrientation, kShort, 1, 7}};
    const std::vector<uint8_t> block = w.Build(entries);
    // The orientation entry ends at 8 (IFD) + 2 (count) + 3 * 12.
    const size_t needed = 8 + 2 + 3 * 12;
    for (size_t n = 0; n <= block.size(); ++n)
      EXPECT_EQ(Parse(block, n), n >= needed ? 7 : 1) << "truncated to " << n << " bytes";
  }
}

TEST(ExifTest, RandomCorruptionStaysInBounds) {
  std::mt19937 gen(77);
  for (bool little : {true, false}) {
    TiffWriter w(little);
    const std::vector<uint8_t> block = w.Build(
        {{0x010F, kAscii, 6, 0x100}, {kOrientation, kShort, 1, 5}, {0x0131, kAscii, 4, 0}}, 20);
    for (int iter = 0; iter < 20000; ++iter) {
      std::vector<uint8_t> b = block;
      const int flips = 1 + static_cast<int>(gen() % 4);
      for (int f = 0; f < flips; ++f) b[gen() % b.size()] = static_cast<uint8_t>(gen());
      const size_t n = gen() % (b.size() + 1);
      const int o = Parse(b, n);
      ASSERT_GE(o, 1);
      ASSERT_LE(o, 8);
    }
  }
  // Pure noise.
  for (int iter = 0; iter < 5000; ++iter) {
    std::vector<uint8_t> b(gen() % 64);
    for (auto& v : b) v = static_cast<uint8_t>(gen());
    if (b.size() >= 2 && iter % 2 == 0) b[0] = b[1] = (iter % 4 == 0) ? 'I' : 'M';
    const int o = Parse(b);
    ASSERT_GE(o, 1);
    ASSERT_LE(o, 8);
  }
}

TEST(ExifTest, App1NeedsTheExifPrefix) {
  TiffWriter w(false);
  const std::vector<uint8_t> tiff = w.Build({{kOrientation, kShort, 1, 6}});
  std::vector<uint8_t> app1 = {'E', 'x', 'i', 'f', 0, 0};
  app1.insert(app1.end(), tiff.begin(), tiff.end());
  EXPECT_EQ(ExifOrientationFromApp1(app1.data(), app1.size()), 6);
  // Every truncation: the orientation is only found with the whole entry present.
  for (size_t n = 0; n < app1.size(); ++n) {
    std::unique_ptr<uint8_t[]> copy(new uint8_t[n == 0 ? 1 : n]);
    std::memcpy(copy.get(), app1.data(), n);
    EXPECT_EQ(ExifOrientationFromApp1(copy.get(), n), n >= 6 + 8 + 2 + 12 ? 6 : 1) << n;
  }
  std::vector<uint8_t> wrong = app1;
  wrong[4] = 1;  // "Exif\1\0"
  EXPECT_EQ(ExifOrientationFromApp1(wrong.data(), wrong.size()), 1);
  // A bare TIFF block (no prefix) is not an APP1 payload.
  EXPECT_EQ(ExifOrientationFromApp1(tiff.data(), tiff.size()), 1);
}

}  // namespace
}  // namespace sluice
