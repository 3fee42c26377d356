// DevicePool's shared buffers: a buffer's block goes back to the pool only after the producer's
// writes, whichever stream frees it. Skipped without a GPU.
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

}  // namespace
}  // namespace sluice
