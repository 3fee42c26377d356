#include "pipeline/resolve_options.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "core/thread_pool.h"

namespace sluice {
namespace {

LoaderOptions Gpu() {
  LoaderOptions o;
  o.device = Device{DeviceType::kCUDA, 0};
  return o;
}

TEST(ResolveOptionsTest, AutomaticValuesFollowTheDevice) {
  const LoaderOptions cpu = ResolveOptions(LoaderOptions{});
  EXPECT_EQ(cpu.prefetch, 2);
  EXPECT_EQ(cpu.io_threads, 2);
  EXPECT_EQ(cpu.num_threads, ThreadPool::CpuShare());
  const LoaderOptions gpu = ResolveOptions(Gpu());
  EXPECT_EQ(gpu.prefetch, 2);  // batches of 256
  EXPECT_EQ(gpu.io_threads, 8);
  // With the engines fed (auto), more than 8 cores leave up to 8 (at most half) to feeding them.
  const int cpus = ThreadPool::CpuShare();
  EXPECT_EQ(gpu.num_threads, cpus > 8 ? std::max(cpus / 2, cpus - 4) : cpus);
  // Values given are kept.
  LoaderOptions given = Gpu();
  given.num_threads = 5, given.io_threads = 1, given.prefetch = 7;
  const LoaderOptions kept = ResolveOptions(given);
  EXPECT_EQ(kept.num_threads, 5);
  EXPECT_EQ(kept.io_threads, 1);
  EXPECT_EQ(kept.prefetch, 7);
}

// Small batches on the GPU path get more of them in flight: 128 images ahead, 2 to 8 batches,
// at least 4 up to batches of 64.
TEST(ResolveOptionsTest, GpuPrefetchHoldsEnoughImages) {
  const std::pair<int, int> expected[] = {{1, 8}, {16, 8}, {17, 8}, {20, 7}, {32, 4}, {33, 4}, {43, 4},
                                          {64, 4}, {65, 2}, {100, 2}, {256, 2}, {4096, 2}};
  for (const auto& [batch, prefetch] : expected) {
    LoaderOptions o = Gpu();
    o.batch_size = batch;
    EXPECT_EQ(ResolveOptions(o).prefetch, prefetch) << "batch " << batch;
    LoaderOptions cpu;
    cpu.batch_size = batch;
    EXPECT_EQ(ResolveOptions(cpu).prefetch, 2) << "batch " << batch << " on the CPU";
  }
}

// On the GPU path small batches (prefetch 4) start at 4 I/O threads, larger ones (prefetch 2)
// at the most the tuner would try; the CPU path at 2 for any batch.
TEST(ResolveOptionsTest, GpuIoThreadsFollowTheBatchSize) {
  const std::pair<int, int> expected[] = {{1, 4}, {32, 4}, {64, 4}, {65, 8}, {256, 8}, {4096, 8}};
  for (const auto& [batch, io] : expected) {
    LoaderOptions o = Gpu();
    o.batch_size = batch;
    EXPECT_EQ(ResolveOptions(o).io_threads, io) << "batch " << batch;
    EXPECT_LE(ResolveOptions(o).io_threads, kMaxTunedIoThreads);
    LoaderOptions cpu;
    cpu.batch_size = batch;
    EXPECT_EQ(ResolveOptions(cpu).io_threads, 2) << "batch " << batch << " on the CPU";
  }
}

TEST(ResolveOptionsTest, TheGpuPathTunesThePrefetchOfSmallBatchesOnly) {
  LoaderOptions gpu = Gpu(), cpu;
  gpu.batch_size = cpu.batch_size = 256;
  EXPECT_FALSE(TuningOf(gpu).prefetch);
  EXPECT_TRUE(TuningOf(cpu).prefetch);
  EXPECT_EQ(TuningOf(gpu).io_max, kMaxTunedIoThreads);
  gpu.batch_size = kSmallBatch;
  EXPECT_TRUE(TuningOf(gpu).prefetch);
  gpu.batch_size = 256;
  gpu.io_threads = 4;  // nothing left to tune: the reason names the prefetch's rule
  EXPECT_EQ(std::string(TuningOf(gpu).fixed),
            "io_threads were given; on the GPU path batches of over 64 images keep prefetch 2");
}

// "auto" stays "auto" under DDP: it once meant "hardware" there. nvJPEG can still free device
// memory mid-run under DDP (see NvjpegHardwareDecoder::Decode): the fix belongs there, not here.
TEST(ResolveOptionsTest, AutoStaysAutoUnderDdp) {
  LoaderOptions o = Gpu();
  o.world_size = 2, o.rank = 1;
  EXPECT_EQ(ResolveOptions(o).decode_route, DecodeRoute::kAuto);
}

TEST(ResolveOptionsTest, CheckNamesTheOption) {
  Result<Plan> plan = Plan::Create({});
  ASSERT_TRUE(plan.ok());
  LoaderOptions o;
  o.io_threads = 0;
  EXPECT_EQ(CheckOptions(o, *plan).message(), "io_threads must be >= 1, got 0");
  o = LoaderOptions{};
  o.rank = 3, o.world_size = 2;
  EXPECT_EQ(CheckOptions(o, *plan).message(), "rank must be in [0, world_size) = [0, 2), got 3");
  o = LoaderOptions{};
  o.gpu_memory_budget = 0;
  EXPECT_EQ(CheckOptions(o, *plan).message(), "gpu_memory_budget must be >= 1, got 0");
  o.gpu_memory_budget = 1;
  o.max_file_bytes = 0;
  EXPECT_EQ(CheckOptions(o, *plan).message(), "max_file_bytes must be >= 1, got 0");
  EXPECT_TRUE(CheckOptions(LoaderOptions{}, *plan).ok());
}

}  // namespace
}  // namespace sluice
