#include "io/shard_disk_cache.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace sluice {
namespace {

namespace fs = std::filesystem;

class ShardDiskCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("sluice_disk_cache_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // Writes `bytes` bytes as the copy of `url` and commits it.
  static void Put(ShardDiskCache* cache, const std::string& url, size_t bytes) {
    auto w = cache->Begin(url);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    std::vector<uint8_t> data(bytes, 7);
    ASSERT_TRUE((*w)->Append(data).ok());
    ASSERT_TRUE((*w)->Commit().ok());
  }
  static std::string Slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }
  size_t Files() const { return static_cast<size_t>(std::distance(fs::directory_iterator(dir_), fs::directory_iterator())); }
  fs::path dir_;
};

TEST_F(ShardDiskCacheTest, ACommittedCopyIsFoundAndAnUncommittedOneLeavesNothing) {
  auto cache = ShardDiskCache::Open(dir_.string(), 1 << 20);
  ASSERT_TRUE(cache.ok()) << cache.status().ToString();
  EXPECT_FALSE((*cache)->Lookup("http://h/a.tar"));
  {
    auto w = (*cache)->Begin("http://h/a.tar");
    ASSERT_TRUE(w.ok());
    const std::string half = "half a shard";
    ASSERT_TRUE((*w)->Append(std::span(reinterpret_cast<const uint8_t*>(half.data()), half.size())).ok());
    EXPECT_EQ(Files(), 1u);  // the temporary file
  }  // the stream failed: no Commit
  EXPECT_EQ(Files(), 0u);
  EXPECT_FALSE((*cache)->Lookup("http://h/a.tar"));
  auto w = (*cache)->Begin("http://h/a.tar");
  const std::string whole = "a whole shard";
  ASSERT_TRUE((*w)->Append(std::span(reinterpret_cast<const uint8_t*>(whole.data()), whole.size())).ok());
  EXPECT_FALSE((*cache)->Lookup("http://h/a.tar")) << "not before it is committed";
  ASSERT_TRUE((*w)->Commit().ok());
  std::optional<std::string> path = (*cache)->Lookup("http://h/a.tar");
  ASSERT_TRUE(path);
  EXPECT_EQ(Slurp(*path), whole);
  EXPECT_NE(path->find("a.tar"), std::string::npos) << *path;
  EXPECT_FALSE((*cache)->Lookup("http://h/b.tar"));
  const ShardDiskCache::Counters c = (*cache)->counters();
  EXPECT_EQ(c.hits, 1);
  EXPECT_EQ(c.misses, 4);
  EXPECT_EQ(c.bytes, static_cast<int64_t>(whole.size()));
}

TEST_F(ShardDiskCacheTest, TheLeastRecentlyUsedGoFirstWhenOverTheBudget) {
  auto cache = ShardDiskCache::Open(dir_.string(), 250);
  ASSERT_TRUE(cache.ok());
  ShardDiskCache& c = **cache;
  Put(&c, "u/0", 100);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // distinct modification times
  Put(&c, "u/1", 100);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(c.Lookup("u/0"));  // used: now newer than u/1
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  Put(&c, "u/2", 100);  // 300 > 250: the least recently used (u/1) goes
  EXPECT_TRUE(c.Lookup("u/0"));
  EXPECT_FALSE(c.Lookup("u/1"));
  EXPECT_TRUE(c.Lookup("u/2"));
  EXPECT_EQ(c.counters().evictions, 1);
  EXPECT_EQ(c.counters().bytes, 200);
  Put(&c, "u/big", 251);  // larger than the budget: never kept, nothing else evicted for it
  EXPECT_FALSE(c.Lookup("u/big"));
  EXPECT_TRUE(c.Lookup("u/0"));
  EXPECT_EQ(Files(), 2u);
}

TEST_F(ShardDiskCacheTest, LeftoversOfEndedProcessesGoAndOtherFilesStay) {
  fs::create_directories(dir_);
  const std::string entry = ShardDiskCache::EntryName("http://h/x.tar");
  std::ofstream(dir_ / (entry + ".part-999999999-0")) << "half";   // no such process
  std::ofstream(dir_ / (entry + ".part-" + std::to_string(getpid()) + "-77")) << "mine";  // running
  std::ofstream(dir_ / "notes.txt") << std::string(1000, 'x');   // not the cache's: never removed
  auto cache = ShardDiskCache::Open(dir_.string(), 10);
  ASSERT_TRUE(cache.ok());
  EXPECT_FALSE(fs::exists(dir_ / (entry + ".part-999999999-0")));
  EXPECT_TRUE(fs::exists(dir_ / (entry + ".part-" + std::to_string(getpid()) + "-77")));
  EXPECT_TRUE(fs::exists(dir_ / "notes.txt"));
  EXPECT_FALSE((*cache)->Lookup("http://h/x.tar")) << "a part is never a copy";
}

TEST_F(ShardDiskCacheTest, AFolderThatCannotBeMadeIsAnErrorNamingIt) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "file") << "x";
  auto cache = ShardDiskCache::Open((dir_ / "file" / "sub").string(), 10);
  EXPECT_EQ(cache.status().code(), StatusCode::kIOError);
  EXPECT_NE(cache.status().message().find("file/sub"), std::string::npos) << cache.status().message();
}

TEST(ShardDiskCacheNameTest, NamesAreDistinctAndReadable) {
  const std::string a = ShardDiskCache::EntryName("http://h/train-0001.tar?sig=1");
  EXPECT_EQ(a.substr(16), "-train-0001.tar");
  EXPECT_NE(a, ShardDiskCache::EntryName("http://g/train-0001.tar"));
  EXPECT_EQ(ShardDiskCache::EntryName("pipe:aws s3 cp s3://b/t-1.tar -").substr(16), "--");
}

}  // namespace
}  // namespace sluice
