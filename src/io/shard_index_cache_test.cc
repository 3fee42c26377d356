#include "io/shard_index_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace sluice {
namespace {

class ShardIndexCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // One folder per test and process: ctest runs the tests of this file at once.
    dir_ = (std::filesystem::temp_directory_path() /
            ("sluice_index_cache_" + std::to_string(getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string Entry() const { return dir_ + "/" + ShardIndexEntryName("a.tar", stamp_, spec_); }
  std::string dir_;
  FileStamp stamp_{12345, 678};
  WebDatasetSpec spec_;
};

ShardIndex Sample() {
  ShardIndex index;
  index.samples.push_back(ShardSample{"k/0", "jpg", 512, 100, 7, ""});
  index.samples.push_back(ShardSample{"k/1", "", -1, 0, -1, "no image member"});
  index.damage = CorruptData("a.tar: truncated at byte 9000");
  return index;
}

TEST_F(ShardIndexCacheTest, AnEntryReadsBackAsWritten) {
  EXPECT_FALSE(LoadShardIndex(dir_, "a.tar", stamp_, spec_).has_value());
  ASSERT_TRUE(SaveShardIndex(dir_, "a.tar", stamp_, spec_, Sample()).ok());
  const std::optional<ShardIndex> got = LoadShardIndex(dir_, "a.tar", stamp_, spec_);
  ASSERT_TRUE(got.has_value());
  ASSERT_EQ(got->samples.size(), 2u);
  EXPECT_EQ(got->samples[0].key, "k/0");
  EXPECT_EQ(got->samples[0].offset, 512);
  EXPECT_EQ(got->samples[0].size, 100);
  EXPECT_EQ(got->samples[0].label, 7);
  EXPECT_EQ(got->samples[1].problem, "no image member");
  EXPECT_EQ(got->damage.code(), StatusCode::kCorruptData);
  EXPECT_EQ(got->damage.message(), "a.tar: truncated at byte 9000");
}

TEST_F(ShardIndexCacheTest, AnotherStampOrSpecOrShardMisses) {
  ASSERT_TRUE(SaveShardIndex(dir_, "a.tar", stamp_, spec_, Sample()).ok());
  EXPECT_FALSE(LoadShardIndex(dir_, "a.tar", FileStamp{12345, 679}, spec_).has_value());
  EXPECT_FALSE(LoadShardIndex(dir_, "a.tar", FileStamp{12346, 678}, spec_).has_value());
  EXPECT_FALSE(LoadShardIndex(dir_, "b.tar", stamp_, spec_).has_value());
  WebDatasetSpec other = spec_;
  other.label_exts = {"txt"};
  EXPECT_FALSE(LoadShardIndex(dir_, "a.tar", stamp_, other).has_value());
}

TEST_F(ShardIndexCacheTest, ADamagedEntryIsAMiss) {
  ASSERT_TRUE(SaveShardIndex(dir_, "a.tar", stamp_, spec_, Sample()).ok());
  std::string bytes;
  {
    std::ifstream f(Entry(), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(f), {});
  }
  for (size_t cut : {size_t{0}, size_t{5}, bytes.size() / 2, bytes.size() - 1}) {
    std::ofstream(Entry(), std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(cut));
    EXPECT_FALSE(LoadShardIndex(dir_, "a.tar", stamp_, spec_).has_value()) << "cut at " << cut;
  }
  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 1;
  std::ofstream(Entry(), std::ios::binary | std::ios::trunc).write(flipped.data(), static_cast<std::streamsize>(flipped.size()));
  EXPECT_FALSE(LoadShardIndex(dir_, "a.tar", stamp_, spec_).has_value());
  std::ofstream(Entry(), std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  EXPECT_TRUE(LoadShardIndex(dir_, "a.tar", stamp_, spec_).has_value());
  EXPECT_TRUE(std::filesystem::directory_iterator(dir_) != std::filesystem::directory_iterator());
  for (const auto& e : std::filesystem::directory_iterator(dir_))
    EXPECT_EQ(e.path().extension(), ".idx") << "a temporary file was left: " << e.path();
}

TEST_F(ShardIndexCacheTest, AnUnwritableFolderIsAnErrorNamingIt) {
  std::filesystem::remove_all(dir_);
  std::ofstream(dir_) << "a file, not a folder";
  const Status st = SaveShardIndex(dir_, "a.tar", stamp_, spec_, Sample());
  EXPECT_EQ(st.code(), StatusCode::kIOError);
  EXPECT_NE(st.message().find(dir_), std::string::npos) << st.message();
  std::filesystem::remove(dir_);
}

}  // namespace
}  // namespace sluice
