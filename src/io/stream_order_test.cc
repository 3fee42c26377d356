#include "io/stream_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <set>
#include <vector>

#include "io/epoch_schedule.h"

namespace sluice {
namespace {

const std::vector<int64_t> kSizes = {7, 3, 11, 5, 9, 1, 6};  // 42 samples in 7 shards

std::vector<int64_t> ShardOf(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> out;
  for (size_t s = 0; s < sizes.size(); ++s) out.insert(out.end(), static_cast<size_t>(sizes[s]), static_cast<int64_t>(s));
  return out;
}

TEST(StreamOrderTest, EverySampleOnceForEveryWorldSize) {
  for (int world : {1, 2, 3, 5, 42, 50})
    for (bool shuffle : {false, true}) {
      std::vector<int64_t> order = StreamOrder(kSizes, {4, 5}, shuffle, 7, 2, world);
      std::sort(order.begin(), order.end());
      std::vector<int64_t> all(42);
      std::iota(all.begin(), all.end(), 0);
      EXPECT_EQ(order, all) << "world " << world << " shuffle " << shuffle;
    }
}

// Rank r's positions (r, r + W, ...) hold a contiguous run of the epoch's stream: whole shards
// in the middle, parts at its two ends, so a rank streams only its own shards.
TEST(StreamOrderTest, EachRankReadsARunOfShards) {
  const std::vector<int64_t> shard = ShardOf(kSizes);
  for (int world : {2, 3, 4}) {
    const std::vector<int64_t> order = StreamOrder(kSizes, {2, 4}, true, 1, 0, world);
    std::vector<int> owners(kSizes.size(), 0);  // ranks that read from each shard
    for (int r = 0; r < world; ++r) {
      std::set<int64_t> shards;
      for (size_t p = static_cast<size_t>(r); p < order.size(); p += static_cast<size_t>(world))
        shards.insert(shard[static_cast<size_t>(order[p])]);
      for (int64_t s : shards) ++owners[static_cast<size_t>(s)];
    }
    // Contiguous runs: each of the world - 1 boundaries between them splits at most one shard,
    // so (rank, shard) pairs number at most shards + world - 1 (strided reading would give
    // nearly shards * world).
    EXPECT_LE(std::accumulate(owners.begin(), owners.end(), 0), static_cast<int>(kSizes.size()) + world - 1)
        << "world " << world;
  }
}

// Without shuffle, one lane, one rank: the stream itself. With lanes, the lanes' samples
// alternate; a sample leaves its place in the interleaved sequence by less than the window.
TEST(StreamOrderTest, LanesInterleaveAndTheWindowBoundsTheShuffle) {
  std::vector<int64_t> plain = StreamOrder(kSizes, {1, 1}, false, 0, 0, 1);
  std::vector<int64_t> iota(42);
  std::iota(iota.begin(), iota.end(), 0);
  EXPECT_EQ(plain, iota);
  const std::vector<int64_t> lanes = StreamOrder(kSizes, {2, 1}, false, 0, 0, 1);
  EXPECT_EQ(std::vector<int64_t>(lanes.begin(), lanes.begin() + 6), (std::vector<int64_t>{0, 21, 1, 22, 2, 23}));
  for (int64_t window : {1, 4, 10}) {
    const std::vector<int64_t> shuffled = StreamOrder({42}, {2, window}, true, 3, 1, 1);
    for (size_t p = 0; p < lanes.size(); ++p) {
      const auto at = std::find(lanes.begin(), lanes.end(), shuffled[p]) - lanes.begin();
      EXPECT_LT(std::abs(at - static_cast<int64_t>(p)), window) << "window " << window;
      EXPECT_EQ(static_cast<int64_t>(p) / window, at / window) << "stays in its block";
    }
  }
}

TEST(StreamOrderTest, APureFunctionOfSeedAndEpoch) {
  const auto a = StreamOrder(kSizes, {4, 8}, true, 5, 3, 2);
  EXPECT_EQ(a, StreamOrder(kSizes, {4, 8}, true, 5, 3, 2));
  EXPECT_NE(a, StreamOrder(kSizes, {4, 8}, true, 5, 4, 2));
  EXPECT_NE(a, StreamOrder(kSizes, {4, 8}, true, 6, 3, 2));
}

// Through EpochSchedule (as a loader uses it): every rank yields the same number of batches and
// every sample comes once over the ranks, for each last-batch policy that keeps them all.
TEST(StreamOrderTest, AScheduleOverItKeepsEverySampleOnce) {
  for (int world : {1, 3, 4})
    for (LastBatch policy : {LastBatch::kPartial, LastBatch::kPad}) {
      ShardOptions o{42, true, 11, 4, policy, 0, world, [](bool shuffle, uint64_t seed, int64_t epoch, int w) {
                       return StreamOrder(kSizes, {2, 6}, shuffle, seed, epoch, w);
                     }};
      std::vector<int> seen(42, 0);
      int64_t batches = -1;
      for (int r = 0; r < world; ++r) {
        o.rank = r;
        auto s = EpochSchedule::Create(o, 1);
        ASSERT_TRUE(s.ok()) << s.status().ToString();
        if (batches >= 0) {
          EXPECT_EQ(s->num_batches(), batches);
        }
        batches = s->num_batches();
        std::vector<int64_t> idx;
        std::vector<uint8_t> pad;
        for (int64_t b = 0; b < s->num_batches(); ++b) {
          s->Batch(b, &idx, &pad);
          for (size_t i = 0; i < idx.size(); ++i)
            if (pad[i] == 0) ++seen[static_cast<size_t>(idx[i])];
        }
      }
      EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), 42) << "world " << world;
    }
}

}  // namespace
}  // namespace sluice
