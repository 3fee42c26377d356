#include "io/tar_source.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "io/tar_test_util.h"

namespace sluice {
namespace {
using namespace sluice::testing;  // NOLINT: test helpers

class TarSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("sluice_tar_source_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::vector<uint8_t>& bytes) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                static_cast<std::streamsize>(bytes.size()));
    return path;
  }
  static std::string Bytes(const SampleBytes& b) { return std::string(reinterpret_cast<const char*>(b.data), b.size); }
  std::filesystem::path dir_;
};

ByteAllocator Heap() {
  return [](size_t n) { return std::shared_ptr<uint8_t>(new uint8_t[n], std::default_delete<uint8_t[]>()); };
}

TEST_F(TarSourceTest, SamplesOfAllShardsInOrderReadByOffset) {
  std::vector<uint8_t> a, b;
  Member(&a, "x/0.jpg", "zero");
  Member(&a, "x/0.cls", "0");
  Member(&a, "x/1.jpg", "one!");
  Member(&a, "x/1.cls", "1");
  End(&a);
  Member(&b, "2.webp", "two");
  Member(&b, "2.cls", "2");
  End(&b);
  const std::string pa = Write("a.tar", a), pb = Write("b.tar", b);
  auto src = TarSource::Create({pa, pb}, WebDatasetSpec{});
  ASSERT_TRUE(src.ok()) << src.status().ToString();
  const TarSource& s = **src;
  ASSERT_EQ(s.size(), 3);
  EXPECT_EQ(s.name(0), pa + ":x/0.jpg");
  EXPECT_EQ(s.name(2), pb + ":2.webp");
  EXPECT_EQ(s.label(1), 1);
  EXPECT_EQ(s.label(2), 2);
  EXPECT_EQ(s.bad_count(), 0);
  EXPECT_EQ(Bytes(*s.Read(1, Heap(), 1 << 20)), "one!");
  EXPECT_EQ(Bytes(*s.Read(2, Heap(), 1 << 20)), "two");
  EXPECT_EQ(s.Read(0, Heap(), 3).status().message(),
            pa + ":x/0.jpg: 4 bytes, over the file size limit of 3 bytes (max_file_bytes)");
  // The digest follows labels and names, not the folder the shards sit in.
  std::filesystem::create_directories(dir_ / "moved");
  const std::string qa = Write("moved/a.tar", a), qb = Write("moved/b.tar", b);
  EXPECT_EQ((*TarSource::Create({qa, qb}, WebDatasetSpec{}))->Digest(), s.Digest());
  EXPECT_NE((*TarSource::Create({qb, qa}, WebDatasetSpec{}))->Digest(), s.Digest());
}

TEST_F(TarSourceTest, BadSamplesAndDamageFailWhenReadNamingThemselves) {
  std::vector<uint8_t> a;
  Member(&a, "ok.jpg", "J");
  Member(&a, "ok.cls", "4");
  Member(&a, "nolabel.jpg", "J");
  Member(&a, "cut.jpg", std::string(3000, 'x'));
  a.resize(512 * 8);  // inside cut.jpg's data
  const std::string pa = Write("a.tar", a);
  auto src = TarSource::Create({pa}, WebDatasetSpec{});
  ASSERT_TRUE(src.ok()) << src.status().ToString();
  const TarSource& s = **src;
  ASSERT_EQ(s.size(), 3);  // ok, nolabel, the damage (cut.jpg is in it)
  EXPECT_EQ(s.bad_count(), 2);
  EXPECT_TRUE(s.Read(0, Heap(), 1 << 20).ok());
  EXPECT_EQ(s.Read(1, Heap(), 1 << 20).status().message(), pa + ":nolabel.jpg: no label member (looked for .cls)");
  EXPECT_EQ(s.name(2), pa);
  const Status damage = s.Read(2, Heap(), 1 << 20).status();
  EXPECT_EQ(damage.code(), StatusCode::kCorruptData);
  EXPECT_EQ(damage.message().rfind(pa + ": truncated at byte", 0), 0u) << damage.message();
}

TEST_F(TarSourceTest, ShardsThatCannotBeReadAreErrorsNamingThem) {
  EXPECT_EQ(TarSource::Create({(dir_ / "none.tar").string()}, {}).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(TarSource::Create({dir_.string()}, {}).status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(TarSource::Create({"http://h/a.tar"}, {}).status().message(),
            "http://h/a.tar: a stream (http, https, pipe:) cannot be read by offset: read it with StreamSource");
  const std::string empty = Write("empty.tar", {});
  auto s = TarSource::Create({empty}, {});  // one entry: the damage ("empty, not a tar archive")
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)->Read(0, Heap(), 100).status().message(), empty + ": empty, not a tar archive");
  std::vector<uint8_t> none;
  Member(&none, "README", "x");
  End(&none);
  EXPECT_EQ(TarSource::Create({Write("n.tar", none)}, {}).status().message().rfind("no samples in 1 shard(s)", 0), 0u);
}

TEST_F(TarSourceTest, AShardRewrittenAfterIndexingIsAnError) {
  std::vector<uint8_t> a;
  Member(&a, "0.jpg", "zero");
  Member(&a, "0.cls", "0");
  End(&a);
  const std::string pa = Write("a.tar", a);
  auto src = TarSource::Create({pa}, WebDatasetSpec{});
  ASSERT_TRUE(src.ok());
  a.resize(a.size() + 512, 0);
  Write("a.tar", a);
  EXPECT_EQ((*src)->Read(0, Heap(), 100).status().message(),
            pa + ":0.jpg: " + pa + ": the shard changed since it was indexed (size or modification time)");
}

TEST_F(TarSourceTest, AtMostSoManyShardsStayOpen) {
  std::vector<std::string> paths;
  std::vector<FileStamp> stamps;
  for (int i = 0; i < 5; ++i) {
    std::string name = "f";
    name += static_cast<char>('0' + i);
    paths.push_back(Write(name, std::vector<uint8_t>(10, static_cast<uint8_t>('a' + i))));
    int64_t size = 0;
    auto fd = OpenRegularFile(paths.back(), &size);
    ASSERT_TRUE(fd.ok());
    stamps.push_back(*StampOf(*fd, paths.back()));
    close(*fd);
  }
  ShardFiles files(paths, stamps, 2);
  uint8_t byte = 0;
  for (int round = 0; round < 3; ++round)
    for (int i = 0; i < 5; ++i) {
      ASSERT_TRUE(files.ReadAt(i, 3, {&byte, 1}).ok());
      EXPECT_EQ(byte, 'a' + i);
      EXPECT_LE(files.open_count(), 2);
    }
  EXPECT_EQ(files.ReadAt(0, 10, {&byte, 1}).message(), paths[0] + ": ends before byte 11");
}

}  // namespace
}  // namespace sluice
