// VideoIndex's lookups on a hand-made index, and IndexVideo's errors on files that are not videos
// (the decoding of real videos is tested against PyAV in tests/python/test_video_decode.py).
#include "video/video_index.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

namespace sluice {
namespace {

VideoIndex Hand() {
  VideoIndex index;
  index.time_base_num = 1;
  index.time_base_den = 1000;
  index.pts = {100, 140, 180, 220, 260, 300, 340};  // 25 frames per second
  index.keyframes = {0, 3, 6};
  return index;
}

TEST(VideoIndex, KeyBeforeIsTheLastKeyFrameAtOrBefore) {
  const VideoIndex index = Hand();
  const size_t want[] = {0, 0, 0, 1, 1, 1, 2};
  for (int64_t f = 0; f < index.num_frames(); ++f) EXPECT_EQ(index.KeyBefore(f), want[f]) << f;
}

TEST(VideoIndex, FrameAtFindsExactTimestampsOnly) {
  const VideoIndex index = Hand();
  EXPECT_EQ(index.FrameAt(100), 0);
  EXPECT_EQ(index.FrameAt(340), 6);
  EXPECT_EQ(index.FrameAt(141), -1);
  EXPECT_EQ(index.FrameAt(0), -1);
  EXPECT_EQ(index.FrameAt(1000), -1);
}

TEST(VideoIndex, AverageRate) {
  EXPECT_DOUBLE_EQ(Hand().AverageRate(), 25.0);  // 6 intervals over 0.24 s
  EXPECT_EQ(VideoIndex{}.AverageRate(), 0);
}

class VideoIndexFiles : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& content) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("sluice_video_index_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(VideoIndexFiles, ErrorsSayWhy) {
  Result<VideoIndex> r = IndexVideo((dir_ / "missing.mp4").string());
  if (!r.ok() && r.status().code() == StatusCode::kFailedPrecondition) GTEST_SKIP() << r.status().ToString();
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  r = IndexVideo(Write("empty.mp4", ""));
  EXPECT_EQ(r.status().code(), StatusCode::kCorruptData);
  EXPECT_NE(r.status().message().find("empty file"), std::string::npos) << r.status().ToString();
  std::string text;
  for (int i = 0; i < 100; ++i) text += "this is not a video\n";
  r = IndexVideo(Write("text.mp4", text));
  EXPECT_EQ(r.status().code(), StatusCode::kCorruptData);
  EXPECT_NE(r.status().message().find("not a video container"), std::string::npos) << r.status().ToString();
  r = IndexVideo(dir_.string());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported) << r.status().ToString();
}

}  // namespace
}  // namespace sluice
