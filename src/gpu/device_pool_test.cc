// DevicePool: a shared buffer's block goes back to the pool only after the producer's writes,
// whichever stream frees it; a freed block counts against the budget until its stream passes the
// free; the pool holds no more than the budget from the driver while blocks go round between a
// loader's and a consumer's streams. Skipped without a GPU.
#include "gpu/device_pool.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "gpu/device.h"

namespace sluice {
namespace {

constexpr size_t kBytes = size_t{8} << 20;

// Holds `stream` for ~100 ms from the host, so the work queued after it is still pending when
// other streams run.
void Stall(cudaStream_t stream) {
  auto sleep = [](void*) { std::this_thread::sleep_for(std::chrono::milliseconds(100)); };
  ASSERT_EQ(cudaLaunchHostFunc(stream, sleep, nullptr), cudaSuccess);
}

// A producer writes 0xAA into a shared buffer on `producer` (stalled first) and records `ready`;
// the buffer is dropped at once, claimed by an idle consumer stream that never waited (claim) or
// by no one. A block allocated next on a third stream and filled with 0x55 must still hold 0x55
// once the producer is done: were the first block freed before the producer's write, the pool
// could hand it out again and the late write would land in the new block.
void ExpectFreeFollowsTheProducer(bool claim) {
  auto created = DevicePool::Create(0, int64_t{1} << 30);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  std::shared_ptr<DevicePool> pool = *created;
  cudaStream_t producer = nullptr, consumer = nullptr, next = nullptr;
  for (cudaStream_t* s : {&producer, &consumer, &next})
    ASSERT_EQ(cudaStreamCreateWithFlags(s, cudaStreamNonBlocking), cudaSuccess);

  auto buffer = pool->AllocateShared(kBytes, producer);
  ASSERT_TRUE(buffer.ok()) << buffer.status().ToString();
  Stall(producer);
  ASSERT_EQ(cudaMemsetAsync((*buffer)->data, 0xAA, kBytes, producer), cudaSuccess);
  ASSERT_EQ(cudaEventCreateWithFlags(&(*buffer)->ready, cudaEventDisableTiming), cudaSuccess);
  ASSERT_EQ(cudaEventRecord((*buffer)->ready, producer), cudaSuccess);
  if (claim) (*buffer)->release_stream.store(consumer);
  buffer->reset();
  ASSERT_EQ(cudaStreamSynchronize(consumer), cudaSuccess);

  auto later = pool->Allocate(kBytes, next);
  ASSERT_TRUE(later.ok()) << later.status().ToString();
  ASSERT_EQ(cudaMemsetAsync(*later, 0x55, kBytes, next), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<uint8_t> host(kBytes);
  ASSERT_EQ(cudaMemcpy(host.data(), *later, kBytes, cudaMemcpyDeviceToHost), cudaSuccess);
  size_t overwritten = 0;
  for (uint8_t v : host) overwritten += v != 0x55;
  EXPECT_EQ(overwritten, 0u) << "bytes of a new block written by the freed buffer's producer";

  pool->Free(*later, kBytes, next);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (cudaStream_t s : {producer, consumer, next}) cudaStreamDestroy(s);
}

class DevicePoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  }
};

TEST_F(DevicePoolTest, AClaimedBufferIsFreedAfterItsProducerEvenIfTheConsumerDidNotWait) {
  ExpectFreeFollowsTheProducer(/*claim=*/true);
}

TEST_F(DevicePoolTest, AnUnclaimedBufferIsFreedAfterItsProducer) {
  ExpectFreeFollowsTheProducer(/*claim=*/false);
}

// A block freed on a stream that has not reached the free (a consumer's stream behind, as under
// DDP) counts against the budget until it does; a request over the budget waits for it instead of
// growing the pool past the budget, then gets memory.
TEST_F(DevicePoolTest, AFreePendingOnItsStreamCountsUntilTheStreamPassesIt) {
  auto created = DevicePool::Create(0, 3 * static_cast<int64_t>(kBytes));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  std::shared_ptr<DevicePool> pool = *created;
  cudaStream_t loader = nullptr, consumer = nullptr;
  for (cudaStream_t* s : {&loader, &consumer})
    ASSERT_EQ(cudaStreamCreateWithFlags(s, cudaStreamNonBlocking), cudaSuccess);

  auto first = pool->Allocate(kBytes, loader);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(cudaStreamSynchronize(loader), cudaSuccess);
  Stall(consumer);  // ~100 ms
  pool->Free(*first, kBytes, consumer);
  EXPECT_EQ(pool->usage().in_use_bytes, static_cast<int64_t>(kBytes)) << "a pending free is not free yet";
  std::vector<void*> held;
  for (int i = 0; i < 2; ++i) {
    auto p = pool->Allocate(kBytes, loader);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    held.push_back(*p);
  }
  EXPECT_EQ(pool->usage().in_use_bytes, 3 * static_cast<int64_t>(kBytes));

  const auto t0 = std::chrono::steady_clock::now();
  auto over = pool->Allocate(kBytes, loader);  // over the budget until the consumer passes the free
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(over.ok()) << over.status().ToString();
  EXPECT_GT(waited, 0.02) << "it did not wait for the pending free";
  EXPECT_EQ(cudaStreamQuery(consumer), cudaSuccess) << "it got memory before the consumer passed the free";
  EXPECT_EQ(pool->usage().in_use_bytes, 3 * static_cast<int64_t>(kBytes));
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "a query that was not ready left an error behind";

  held.push_back(*over);
  for (void* p : held) pool->Free(p, kBytes, loader);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(pool->usage().in_use_bytes, 0);
  EXPECT_LE(pool->usage().peak_bytes, 3 * static_cast<int64_t>(kBytes));
  for (cudaStream_t s : {loader, consumer}) cudaStreamDestroy(s);
}

// A loader's stream fills blocks and a consumer's stream, always a little behind, frees them (a
// training step's pattern). The driver would rather grow a pool than reuse what the consumer's
// stream freed: uncapped (SLUICE_POOL_CAP=0), the pool's reserve climbs far past the budget here.
TEST_F(DevicePoolTest, BlocksGoingRoundTwoStreamsStayWithinTheBudget) {
  const int64_t budget = 8 * static_cast<int64_t>(kBytes);  // 64 MiB: two of the driver's 32 MiB steps
  auto created = DevicePool::Create(0, budget);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  std::shared_ptr<DevicePool> pool = *created;
  cudaStream_t loader = nullptr, consumer = nullptr;
  for (cudaStream_t* s : {&loader, &consumer})
    ASSERT_EQ(cudaStreamCreateWithFlags(s, cudaStreamNonBlocking), cudaSuccess);
  cudaEvent_t filled = nullptr;
  ASSERT_EQ(cudaEventCreateWithFlags(&filled, cudaEventDisableTiming), cudaSuccess);
  auto pause = [](void*) { std::this_thread::sleep_for(std::chrono::milliseconds(2)); };
  for (int i = 0; i < 96; ++i) {
    auto p = pool->Allocate(kBytes, loader);
    ASSERT_TRUE(p.ok()) << "block " << i << ": " << p.status().ToString();
    ASSERT_EQ(cudaMemsetAsync(*p, i, kBytes, loader), cudaSuccess);
    ASSERT_EQ(cudaEventRecord(filled, loader), cudaSuccess);
    ASSERT_EQ(cudaStreamWaitEvent(consumer, filled, 0), cudaSuccess);
    ASSERT_EQ(cudaLaunchHostFunc(consumer, pause, nullptr), cudaSuccess);  // the step's work
    pool->Free(*p, kBytes, consumer);
  }
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const DevicePool::Usage u = pool->usage();
  EXPECT_EQ(u.in_use_bytes, 0);
  EXPECT_LE(u.peak_reserved_bytes, budget) << "the pool held more than the budget from the driver";
  EXPECT_EQ(u.overflow_allocations, 0);
  cudaEventDestroy(filled);
  for (cudaStream_t s : {loader, consumer}) cudaStreamDestroy(s);
}

}  // namespace
}  // namespace sluice
