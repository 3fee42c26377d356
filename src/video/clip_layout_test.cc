#include "video/clip_layout.h"

#include <gtest/gtest.h>

#include <set>
#include <utility>
#include <vector>

#include "io/epoch_schedule.h"

namespace sluice {
namespace {

using ClipSet = std::set<std::pair<int64_t, int64_t>>;  // (video, first frame)

ClipLayout Make(const ClipSpec& spec, std::vector<int64_t> frames) {
  Result<ClipLayout> l = ClipLayout::Create(spec, std::move(frames));
  EXPECT_TRUE(l.ok()) << l.status().ToString();
  return std::move(l).value();
}

TEST(ClipLayout, EveryClipStartsEachStepWhileTheWholeClipFits) {
  // 16 frames, every 2nd: a clip spans 31 frames. By hand: 100 frames hold starts 0..64 by 16
  // (64 + 30 = 94 <= 99; 80 + 30 = 110 does not fit), 31 frames one clip, 30 and 0 none, 47
  // frames starts 0 and 16 (16 + 30 = 46, the last frame).
  const ClipLayout l = Make({16, 2, 16}, {100, 31, 30, 0, 47});
  ASSERT_EQ(l.num_clips(), 8);
  const std::vector<std::pair<int64_t, int64_t>> want = {{0, 0}, {0, 16}, {0, 32}, {0, 48},
                                                         {0, 64}, {1, 0}, {4, 0}, {4, 16}};
  for (int64_t i = 0; i < l.num_clips(); ++i) {
    const Clip c = l.At(i, 7, 3);
    EXPECT_EQ(std::make_pair(c.video, c.first), want[static_cast<size_t>(i)]) << "clip " << i;
    EXPECT_EQ(c.length, 16);
    EXPECT_EQ(c.Frame(15), c.first + 30);
  }
  EXPECT_EQ(l.clips_of(0), 5);
  EXPECT_EQ(l.clips_of(2), 0);
  EXPECT_EQ(l.short_videos(), (std::vector<int64_t>{2, 3}));
}

TEST(ClipLayout, RandomClipsAreDrawnPerEpochAmongTheStartsThatFit) {
  const ClipLayout l = Make({16, 2, 16, ClipPolicy::kRandomClips, 3}, {100, 31, 10});
  ASSERT_EQ(l.num_clips(), 6);  // 3 per video that holds a clip; none from the 10-frame one
  std::set<int64_t> starts;
  bool moved = false;
  for (uint64_t epoch = 0; epoch < 3000; ++epoch) {
    for (int64_t i = 0; i < 6; ++i) {
      const Clip c = l.At(i, 1, epoch);
      EXPECT_EQ(c.video, i < 3 ? 0 : 1);
      ASSERT_GE(c.first, 0);
      ASSERT_LE(c.Frame(15), i < 3 ? 99 : 30);  // the whole clip inside its video
      if (c.video == 0) starts.insert(c.first);
      EXPECT_EQ(c.first, l.At(i, 1, epoch).first);  // a pure function of (seed, epoch, clip)
    }
    moved = moved || l.At(0, 1, epoch).first != l.At(0, 1, 0).first;
  }
  EXPECT_TRUE(moved);
  EXPECT_EQ(starts.size(), 70u);  // every start 0..69 of the 100-frame video drawn
  EXPECT_EQ(*starts.rbegin(), 69);
}

TEST(ClipLayout, BadSpecsNameTheField) {
  EXPECT_EQ(ClipLayout::Create({0, 1, 1}, {10}).status().message(), "sequence_length must be >= 1, got 0");
  EXPECT_EQ(ClipLayout::Create({4, 1, 0}, {10}).status().message(), "step must be >= 1, got 0");
  EXPECT_EQ(ClipLayout::Create({4, 1, 1, ClipPolicy::kRandomClips, 0}, {10}).status().message(),
            "clips_per_video must be >= 1, got 0");
  EXPECT_EQ(ClipLayout::Create({4, 1, 1}, {10, -1}).status().message(), "video 1 has a negative frame count (-1)");
}

// The clips of an epoch, shuffled and sharded over 1-4 ranks by the loader's EpochSchedule:
// every clip (video, first frame) exactly once.
TEST(ClipLayout, EveryClipExactlyOnceOverRanks) {
  const ClipLayout l = Make({8, 2, 5}, {40, 17, 90, 3, 64, 15});
  ClipSet all;
  for (int64_t i = 0; i < l.num_clips(); ++i) all.insert({l.At(i, 0, 2).video, l.At(i, 0, 2).first});
  ASSERT_EQ(static_cast<int64_t>(all.size()), l.num_clips());  // distinct clips
  for (int world = 1; world <= 4; ++world) {
    std::multiset<std::pair<int64_t, int64_t>> seen;
    for (int rank = 0; rank < world; ++rank) {
      ShardOptions o;
      o.num_samples = l.num_clips();
      o.shuffle = true;
      o.seed = 11;
      o.batch_size = 3;
      o.rank = rank;
      o.world_size = world;
      Result<EpochSchedule> s = EpochSchedule::Create(o, 2);
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      std::vector<int64_t> indices;
      std::vector<uint8_t> pad;
      for (int64_t b = 0; b < s->num_batches(); ++b) {
        s->Batch(b, &indices, &pad);
        for (size_t k = 0; k < indices.size(); ++k)
          if (!pad[k]) seen.insert({l.At(indices[k], 0, 2).video, l.At(indices[k], 0, 2).first});
      }
    }
    EXPECT_EQ(ClipSet(seen.begin(), seen.end()), all) << world << " ranks";
    EXPECT_EQ(seen.size(), all.size()) << world << " ranks";
  }
}

}  // namespace
}  // namespace sluice
