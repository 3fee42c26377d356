#include "io/tar_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/tar_test_util.h"

namespace sluice {
namespace {
using namespace sluice::testing;  // NOLINT: test helpers

struct Seen {
  std::string name;
  std::string data;  // empty when skipped
  int64_t offset;
};

// Every member; reads the data of those whose name ends in `read_suffix`.
Result<std::vector<Seen>> Walk(std::vector<uint8_t> bytes, const std::string& read_suffix = "") {
  MemoryInput in(std::move(bytes));
  TarReader tar(&in, "t.tar");
  std::vector<Seen> out;
  for (;;) {
    SLUICE_ASSIGN_OR_RETURN(std::optional<TarMember> m, tar.Next());
    if (!m) return out;
    Seen s{m->name, "", m->data_offset};
    if (!read_suffix.empty() && m->name.ends_with(read_suffix)) {
      std::vector<uint8_t> data(static_cast<size_t>(m->size));
      SLUICE_RETURN_IF_ERROR(tar.ReadData(data));
      s.data.assign(data.begin(), data.end());
    }
    out.push_back(s);
  }
}

TEST(TarReaderTest, MembersInOrderWithTheirDataAndOffsets) {
  std::vector<uint8_t> tar;
  Member(&tar, "a/000.jpg", std::string(700, 'x'));  // two blocks of data
  Member(&tar, "a/000.cls", "3");
  Member(&tar, "a/", "", '5');                        // a directory: passed over
  Member(&tar, "a/001.jpg", "jpeg");
  End(&tar);
  Result<std::vector<Seen>> got = Walk(tar, ".cls");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 3u);
  EXPECT_EQ((*got)[0].name, "a/000.jpg");
  EXPECT_EQ((*got)[0].offset, 512);
  EXPECT_EQ((*got)[1].name, "a/000.cls");
  EXPECT_EQ((*got)[1].offset, 512 + 1024 + 512);
  EXPECT_EQ((*got)[1].data, "3");
  EXPECT_EQ((*got)[2].name, "a/001.jpg");
  EXPECT_EQ((*got)[2].offset, 512 + 1024 + 512 + 512 + 512 + 512);
}

TEST(TarReaderTest, LongNamesFromGnuAndPaxHeadersAndThePosixPrefix) {
  const std::string long_name = std::string(150, 'd') + "/sample.jpg";
  std::vector<uint8_t> tar;
  Member(&tar, "././@LongLink", long_name + std::string(1, '\0'), 'L');
  Member(&tar, "cut-short", "L");
  const std::string pax_name = std::string(120, 'p') + "/x.png";
  const std::string record = "path=" + pax_name + "\n";
  std::string rec = std::to_string(record.size() + 4) + " " + record;  // 3 digits + space
  ASSERT_EQ(rec.size(), record.size() + 4);
  Member(&tar, "PaxHeader", rec, 'x');
  Member(&tar, "ignored", "P");
  Append(&tar, Header("file.cls", 1, '0', "pre/fix"));
  tar.push_back('7');
  tar.resize((tar.size() + 511) / 512 * 512, 0);
  End(&tar);
  Result<std::vector<Seen>> got = Walk(tar, "");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 3u);
  EXPECT_EQ((*got)[0].name, long_name);
  EXPECT_EQ((*got)[1].name, pax_name);
  EXPECT_EQ((*got)[2].name, "pre/fix/file.cls");
}

TEST(TarReaderTest, PaxSizeAndBase256SizeOverrideTheOctalField) {
  std::vector<uint8_t> tar;
  Member(&tar, "PaxHeader", "12 size=600\n", 'x');
  Append(&tar, Header("big.jpg", 0));  // the pax size wins
  tar.resize(tar.size() + 1024, 'z');
  std::vector<uint8_t> h = Header("b256.jpg", 0);
  std::memset(h.data() + 124, 0, 12);
  h[124] = 0x80;
  h[135] = 3;  // 3 bytes, base-256
  std::memset(h.data() + 148, ' ', 8);
  unsigned sum = 0;
  for (uint8_t b : h) sum += b;
  std::snprintf(reinterpret_cast<char*>(h.data()) + 148, 8, "%06o", sum);
  Append(&tar, h);
  tar.push_back('a'), tar.push_back('b'), tar.push_back('c');
  tar.resize((tar.size() + 511) / 512 * 512, 0);
  End(&tar);
  Result<std::vector<Seen>> got = Walk(tar, ".jpg");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].data, std::string(600, 'z'));
  EXPECT_EQ((*got)[1].data, "abc");
}

TEST(TarReaderTest, EndsAtTheZeroBlockOrWhereTheInputEndsBetweenMembers) {
  std::vector<uint8_t> tar;
  Member(&tar, "a.jpg", "1");
  Result<std::vector<Seen>> no_end_blocks = Walk(tar);
  ASSERT_TRUE(no_end_blocks.ok()) << no_end_blocks.status().ToString();
  EXPECT_EQ(no_end_blocks->size(), 1u);
  std::vector<uint8_t> unpadded(tar.begin(), tar.begin() + 513);  // data, no padding: nothing lost
  Result<std::vector<Seen>> got = Walk(unpadded, ".jpg");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ((*got)[0].data, "1");
  std::vector<uint8_t> only_zeros(10240, 0);  // tarfile's empty archive
  got = Walk(only_zeros);
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->empty());
}

TEST(TarReaderTest, DamageIsAnErrorNamingTheArchiveAndTheByte) {
  std::vector<uint8_t> tar;
  Member(&tar, "a.jpg", std::string(1000, 'x'));
  Member(&tar, "b.jpg", "y");
  End(&tar);
  auto message = [](std::vector<uint8_t> bytes, const std::string& read = "") {
    Result<std::vector<Seen>> r = Walk(std::move(bytes), read);
    return r.ok() ? std::string("ok") : r.status().ToString();
  };
  // Cut inside the first member's data: skipped or read, the loss is named.
  std::vector<uint8_t> cut(tar.begin(), tar.begin() + 700);
  EXPECT_NE(message(cut).find("t.tar: truncated at byte 700 (member 'a.jpg' needs 812 more bytes)"), std::string::npos)
      << message(cut);
  EXPECT_NE(message(cut, ".jpg").find("t.tar: truncated at byte 700 (member 'a.jpg' needs 812 more bytes)"),
            std::string::npos)
      << message(cut, ".jpg");
  // Cut inside the second header.
  std::vector<uint8_t> in_header(tar.begin(), tar.begin() + 1536 + 100);
  EXPECT_NE(message(in_header).find("truncated at byte 1636 (inside a header)"), std::string::npos);
  // A flipped byte in the second header.
  std::vector<uint8_t> flipped = tar;
  flipped[1536 + 3] ^= 0x20;
  EXPECT_NE(message(flipped).find("t.tar: corrupt header at byte 1536 (checksum mismatch)"), std::string::npos)
      << message(flipped);
  // A pax size no archive holds.
  std::vector<uint8_t> huge;
  Member(&huge, "PaxHeader", "28 size=9223372036854775000\n", 'x');
  Append(&huge, Header("a.jpg", 0));
  EXPECT_NE(message(huge).find("t.tar: corrupt header at byte 1024 (size 9223372036854775000)"), std::string::npos)
      << message(huge);
  // Not a tar at all, and nothing.
  std::vector<uint8_t> jpeg(2048, 0xff);
  EXPECT_NE(message(jpeg).find("t.tar: not a tar archive (no valid header at byte 0)"), std::string::npos);
  EXPECT_NE(message({}).find("t.tar: empty, not a tar archive"), std::string::npos);
}

}  // namespace
}  // namespace sluice
