// CudaStream: a stream made with high_priority has the device's greatest stream priority, one made
// without it the default; both are non-blocking. Skipped without a GPU.
#include "gpu/cuda_util.h"

#include <gtest/gtest.h>

#include "gpu/device.h"

namespace sluice {
namespace {

TEST(CudaStreamTest, HighPriorityStreamsTakeTheDevicesGreatestPriority) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  int least = 0, greatest = 0;
  ASSERT_EQ(cudaDeviceGetStreamPriorityRange(&least, &greatest), cudaSuccess);
  CudaStream normal, high;
  ASSERT_TRUE(normal.Create().ok());
  ASSERT_TRUE(high.Create(/*high_priority=*/true).ok());
  int p_normal = 1, p_high = 1;
  unsigned flags = 0;
  ASSERT_EQ(cudaStreamGetPriority(normal.get(), &p_normal), cudaSuccess);
  ASSERT_EQ(cudaStreamGetPriority(high.get(), &p_high), cudaSuccess);
  EXPECT_EQ(p_normal, 0);  // CUDA's default
  EXPECT_EQ(p_high, greatest);
  EXPECT_LT(greatest, least) << "this device has one stream priority only";
  ASSERT_EQ(cudaStreamGetFlags(high.get(), &flags), cudaSuccess);
  EXPECT_EQ(flags & cudaStreamNonBlocking, unsigned{cudaStreamNonBlocking});
}

}  // namespace
}  // namespace sluice
