// The video index cache: an entry reads back as written, and misses for another file, another
// stamp (a rewritten video) or a damaged file.
#include "video/video_index_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/cache_entry.h"

namespace sluice {
namespace {

class VideoIndexCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::temp_directory_path() / ("sluice_vidx_" + std::to_string(::getpid()))).string();
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  static VideoIndex Sample() {
    VideoIndex index;
    index.codec = "h264";
    index.width = 1920;
    index.height = 1080;
    index.time_base_num = 1;
    index.time_base_den = 90000;
    index.pts = {-3000, 0, 3000, 6000, 9000};
    index.keyframes = {0, 3};
    return index;
  }
  std::string dir_;
  const FileStamp stamp_{123456, 789};
};

TEST_F(VideoIndexCacheTest, ReadsBackWhatWasSaved) {
  EXPECT_FALSE(LoadVideoIndex(dir_, "v.mp4", stamp_).has_value());
  ASSERT_TRUE(SaveVideoIndex(dir_, "v.mp4", stamp_, Sample()).ok());
  const std::optional<VideoIndex> got = LoadVideoIndex(dir_, "v.mp4", stamp_);
  ASSERT_TRUE(got.has_value());
  const VideoIndex want = Sample();
  EXPECT_EQ(got->codec, want.codec);
  EXPECT_EQ(got->width, want.width);
  EXPECT_EQ(got->height, want.height);
  EXPECT_EQ(got->time_base_den, want.time_base_den);
  EXPECT_EQ(got->pts, want.pts);
  EXPECT_EQ(got->keyframes, want.keyframes);
}

TEST_F(VideoIndexCacheTest, MissesForAnotherFileOrStamp) {
  ASSERT_TRUE(SaveVideoIndex(dir_, "v.mp4", stamp_, Sample()).ok());
  EXPECT_FALSE(LoadVideoIndex(dir_, "w.mp4", stamp_).has_value());
  EXPECT_FALSE(LoadVideoIndex(dir_, "v.mp4", FileStamp{123456, 790}).has_value());
  EXPECT_FALSE(LoadVideoIndex(dir_, "v.mp4", FileStamp{123457, 789}).has_value());
}

TEST_F(VideoIndexCacheTest, MissesForADamagedEntry) {
  ASSERT_TRUE(SaveVideoIndex(dir_, "v.mp4", stamp_, Sample()).ok());
  for (const auto& e : std::filesystem::directory_iterator(dir_)) {
    std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40);
    f.put('\x7f');
  }
  EXPECT_FALSE(LoadVideoIndex(dir_, "v.mp4", stamp_).has_value());
}

}  // namespace
}  // namespace sluice
