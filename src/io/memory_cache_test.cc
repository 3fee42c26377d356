#include "io/memory_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace sluice {
namespace {

// Samples of `sizes[i]` bytes of value i; counts its reads; index 1 fails.
class CountingSource : public Source {
 public:
  explicit CountingSource(std::vector<size_t> sizes) : sizes_(std::move(sizes)) {}
  int64_t size() const override { return static_cast<int64_t>(sizes_.size()); }
  int64_t label(int64_t i) const override { return i; }
  std::string name(int64_t i) const override {
    std::string n = "s";
    return n += std::to_string(i);
  }
  Result<SampleBytes> Read(int64_t i, const ByteAllocator& memory, int64_t) const override {
    reads.fetch_add(1);
    if (i == 1) return IOError("s1: unreadable");
    const size_t n = sizes_[static_cast<size_t>(i)];
    SampleBytes b;
    b.owner = memory(n + 1);
    std::fill(b.owner.get(), b.owner.get() + n, static_cast<uint8_t>(i));
    b.data = b.owner.get();
    b.size = n;
    return b;
  }
  uint64_t Digest() const override { return 42; }
  mutable std::atomic<int> reads{0};

 private:
  std::vector<size_t> sizes_;
};

ByteAllocator Heap() {
  return [](size_t n) { return std::shared_ptr<uint8_t>(new uint8_t[n], std::default_delete<uint8_t[]>()); };
}

TEST(MemoryCacheTest, KeepsFirstReadsUpToTheBudgetAndServesThemFromMemory) {
  auto src = std::make_shared<CountingSource>(std::vector<size_t>{100, 10, 100, 100});
  MemoryCache cache(src, 250);
  EXPECT_EQ(cache.size(), 4);
  EXPECT_EQ(cache.name(2), "s2");
  EXPECT_EQ(cache.Digest(), 42u);
  for (int round = 0; round < 3; ++round)
    for (int i : {0, 2, 3}) {
      auto b = cache.Read(i, Heap(), 1 << 20);
      ASSERT_TRUE(b.ok());
      ASSERT_EQ(b->size, 100u);
      EXPECT_EQ(b->data[99], i);
    }
  // 0 and 2 fit (200 of 250); 3 did not, and is read from the source every time.
  EXPECT_EQ(src->reads.load(), 3 + 2);
  MemoryCache::Counters c = cache.counters();
  EXPECT_EQ(c.hits, 4);
  EXPECT_EQ(c.misses, 5);
  EXPECT_EQ(c.bytes, 200);
  EXPECT_EQ(c.budget, 250);
  // A kept sample is the kept buffer itself, shared.
  EXPECT_EQ(cache.Read(0, Heap(), 1 << 20)->data, cache.Read(0, Heap(), 1 << 20)->data);
  cache.ResetCounters();
  EXPECT_EQ(cache.counters().hits, 0);
  EXPECT_EQ(cache.counters().bytes, 200);
}

TEST(MemoryCacheTest, FailedReadsAreNotKeptAndTheLimitStillHolds) {
  auto src = std::make_shared<CountingSource>(std::vector<size_t>{100, 10, 100, 100});
  MemoryCache cache(src, 1000);
  EXPECT_EQ(cache.Read(1, Heap(), 1 << 20).status().message(), "s1: unreadable");
  EXPECT_EQ(cache.Read(1, Heap(), 1 << 20).status().message(), "s1: unreadable");
  EXPECT_EQ(src->reads.load(), 2);
  ASSERT_TRUE(cache.Read(0, Heap(), 1 << 20).ok());
  // A kept sample over a smaller max_bytes goes to the source, which names the limit.
  ASSERT_TRUE(cache.Read(0, Heap(), 50).ok());
  EXPECT_EQ(src->reads.load(), 4);
}

// 8 threads read 63 samples of 10 bytes (all but the unreadable s1) 4 times each: every read
// gives the sample's bytes, and each kept sample is counted once (40 fit the budget).
void ReadOnManyThreads(CacheHandOut hand_out) {
  auto src = std::make_shared<CountingSource>(std::vector<size_t>(64, 10));
  MemoryCache cache(src, 10 * 40, hand_out);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int round = 0; round < 4; ++round)
        for (int i = 0; i < 64; ++i)
          if (i != 1) {
            auto b = cache.Read(i, Heap(), 1 << 20);
            ASSERT_TRUE(b.ok());
            ASSERT_EQ(b->size, 10u);
            ASSERT_EQ(b->data[9], i);
          }
    });
  for (auto& t : threads) t.join();
  const MemoryCache::Counters c = cache.counters();
  EXPECT_EQ(c.bytes, 400);
  EXPECT_EQ(c.hits + c.misses, 8 * 4 * 63);
}

TEST(MemoryCacheTest, ManyThreadsKeepEachSampleOnce) { ReadOnManyThreads(CacheHandOut::kShare); }

// CacheHandOut::kCopy (the GPU path): every read comes back in the caller's memory, a hit as a
// copy of the kept bytes; the budget and the counters as with kShare.
TEST(MemoryCacheTest, CopiesHandOutTheCallersMemory) {
  auto src = std::make_shared<CountingSource>(std::vector<size_t>{100, 10, 100, 100});
  MemoryCache cache(src, 250, CacheHandOut::kCopy);
  std::vector<const uint8_t*> given;  // what the caller's allocator handed out
  const ByteAllocator mine = [&](size_t n) {
    std::shared_ptr<uint8_t> p(new uint8_t[n], std::default_delete<uint8_t[]>());
    given.push_back(p.get());
    return p;
  };
  for (int round = 0; round < 3; ++round)
    for (int i : {0, 2, 3}) {
      auto b = cache.Read(i, mine, 1 << 20);
      ASSERT_TRUE(b.ok());
      ASSERT_EQ(b->size, 100u);
      EXPECT_EQ(b->data, given.back()) << "round " << round << ", sample " << i;
      EXPECT_EQ(b->data[0], i);
      EXPECT_EQ(b->data[99], i);
    }
  EXPECT_EQ(given.size(), 9u);
  EXPECT_EQ(src->reads.load(), 3 + 2);  // 0 and 2 kept (200 of 250), 3 read every time
  MemoryCache::Counters c = cache.counters();
  EXPECT_EQ(c.hits, 4);
  EXPECT_EQ(c.misses, 5);
  EXPECT_EQ(c.bytes, 200);
  // Failed reads are not kept; a hit over a smaller max_bytes goes to the source.
  EXPECT_EQ(cache.Read(1, mine, 1 << 20).status().message(), "s1: unreadable");
  ASSERT_TRUE(cache.Read(0, mine, 50).ok());
  EXPECT_EQ(src->reads.load(), 7);
  EXPECT_EQ(cache.counters().bytes, 200);
}

TEST(MemoryCacheTest, ManyThreadsCopyingKeepEachSampleOnce) { ReadOnManyThreads(CacheHandOut::kCopy); }

}  // namespace
}  // namespace sluice
