#include "core/block_allocator.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

namespace sluice {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

// The base allocator: the system's, counting the calls (or failing when `fail` is set).
struct Counts {
  std::atomic<int> allocs{0}, frees{0};
  bool fail = false;
};
RawAllocator Counting(const std::shared_ptr<Counts>& c) {
  return RawAllocator{[](void* ctx, size_t bytes) -> void* {
                        auto* counts = static_cast<Counts*>(ctx);
                        if (counts->fail) return nullptr;
                        ++counts->allocs;
                        return std::aligned_alloc(64, bytes);
                      },
                      [](void* ctx, void* p) {
                        ++static_cast<Counts*>(ctx)->frees;
                        std::free(p);
                      },
                      c};
}

TEST(BlockAllocatorTest, PiecesAreAlignedDistinctAndShareABlock) {
  auto counts = std::make_shared<Counts>();
  BlockAllocator blocks(Counting(counts), kMiB);
  std::vector<uint8_t*> pieces;
  for (size_t n : {1, 63, 64, 65, 1000, 4096}) {
    auto* p = static_cast<uint8_t*>(blocks.Allocate(n));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
    std::memset(p, static_cast<int>(n & 0xff), n);
    pieces.push_back(p);
  }
  // Each piece starts where the one before it ended, rounded up to 64 bytes.
  const size_t expected_gap[] = {64, 64, 64, 128, 1024};
  for (size_t k = 0; k + 1 < pieces.size(); ++k) EXPECT_EQ(static_cast<size_t>(pieces[k + 1] - pieces[k]), expected_gap[k]);
  EXPECT_EQ(blocks.blocks(), 1);
  EXPECT_EQ(blocks.reserved_bytes(), kMiB);
  for (uint8_t* p : pieces) blocks.Free(p);
}

TEST(BlockAllocatorTest, BlocksGrowGeometrically) {
  // 12 pieces of 256 KiB over blocks of at least 1 MiB: 1 MiB (4 pieces), 1 MiB (4), 2 MiB (the
  // 9th to 12th: a new block is at least the size of all before it).
  auto counts = std::make_shared<Counts>();
  BlockAllocator blocks(Counting(counts), kMiB);
  std::vector<void*> pieces;
  for (int k = 0; k < 12; ++k) pieces.push_back(blocks.Allocate(kMiB / 4));
  EXPECT_EQ(blocks.blocks(), 3);
  EXPECT_EQ(blocks.reserved_bytes(), 4 * kMiB);
  EXPECT_EQ(counts->allocs.load(), 3);
  // A request larger than every block gets a block of its own size.
  void* big = blocks.Allocate(9 * kMiB);
  EXPECT_EQ(blocks.blocks(), 4);
  EXPECT_EQ(blocks.reserved_bytes(), 13 * kMiB);
  pieces.push_back(big);
  for (void* p : pieces) blocks.Free(p);
}

TEST(BlockAllocatorTest, ABlockStartsOverOnceAllItsPiecesAreBack) {
  auto counts = std::make_shared<Counts>();
  BlockAllocator blocks(Counting(counts), kMiB);
  void* a = blocks.Allocate(kMiB / 2);
  void* b = blocks.Allocate(kMiB / 2);
  blocks.Free(a);
  // One piece is still out: the block is full, so the next piece needs a new block.
  void* c = blocks.Allocate(kMiB / 2);
  EXPECT_EQ(blocks.blocks(), 2);
  blocks.Free(b);
  // The first block is empty again and starts over.
  void* d = blocks.Allocate(kMiB / 2);
  EXPECT_EQ(d, a);
  EXPECT_EQ(blocks.blocks(), 2);
  blocks.Free(c);
  blocks.Free(d);
}

TEST(BlockAllocatorTest, FreeNeverReachesTheBaseAllocatorOnlyDestructionDoes) {
  auto counts = std::make_shared<Counts>();
  {
    BlockAllocator blocks(Counting(counts), kMiB);
    ASSERT_TRUE(blocks.Reserve());
    EXPECT_EQ(counts->allocs.load(), 1);
    for (int round = 0; round < 3; ++round) {
      std::vector<void*> pieces;
      for (int k = 0; k < 40; ++k) pieces.push_back(blocks.Allocate(100 * 1024));
      for (void* p : pieces) blocks.Free(p);
    }
    EXPECT_EQ(counts->frees.load(), 0);
  }
  EXPECT_EQ(counts->frees.load(), counts->allocs.load());
}

TEST(BlockAllocatorTest, OutOfMemoryIsANullPiece) {
  auto counts = std::make_shared<Counts>();
  counts->fail = true;
  BlockAllocator blocks(Counting(counts), kMiB);
  EXPECT_FALSE(blocks.Reserve());
  EXPECT_EQ(blocks.Allocate(10), nullptr);
  EXPECT_EQ(blocks.reserved_bytes(), 0u);
}

TEST(BlockAllocatorTest, ThreadsAllocateAndFreeWithoutOverlap) {
  auto counts = std::make_shared<Counts>();
  BlockAllocator blocks(Counting(counts), 256 * 1024);
  std::vector<std::thread> threads;
  std::atomic<int> corrupt{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      std::vector<std::pair<uint8_t*, size_t>> held;
      for (int k = 0; k < 2000; ++k) {
        if (held.size() < 16 && rng() % 3 != 0) {
          const size_t n = 1 + rng() % 50000;
          auto* p = static_cast<uint8_t*>(blocks.Allocate(n));
          std::memset(p, t + 1, n);
          held.emplace_back(p, n);
        } else if (!held.empty()) {
          const auto [p, n] = held.back();
          held.pop_back();
          for (size_t i = 0; i < n; i += 997) corrupt += p[i] != t + 1;
          blocks.Free(p);
        }
      }
      for (const auto& [p, n] : held) blocks.Free(p);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(corrupt.load(), 0);
}

TEST(BlockAllocatorTest, AHostPoolOverItKeepsItAliveUntilTheLastBuffer) {
  auto counts = std::make_shared<Counts>();
  std::shared_ptr<uint8_t> kept;
  {
    auto blocks = std::make_shared<BlockAllocator>(Counting(counts), kMiB);
    auto pool = HostPool::Create(BlockAllocator::AsRawAllocator(blocks));
    kept = pool->Allocate(5000);
    auto other = pool->Allocate(5000);
    ASSERT_NE(kept, nullptr);
    EXPECT_NE(kept.get(), other.get());
    std::memset(kept.get(), 7, 5000);
  }  // the pool and the caller's reference are gone; the buffer holds the blocks
  EXPECT_EQ(counts->frees.load(), 0);
  EXPECT_EQ(kept.get()[4999], 7);
  kept.reset();
  EXPECT_EQ(counts->frees.load(), 1);
}

}  // namespace
}  // namespace sluice
