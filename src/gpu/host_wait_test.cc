// PreferBlockingWaits: CUDA's automatic choice becomes blocking waits, an explicit choice stays,
// and the device keeps working (a copy waited for). Skipped without a GPU.
#include "gpu/host_wait.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "gpu/device.h"

namespace sluice {
namespace {

unsigned Schedule() {
  unsigned flags = 0;
  EXPECT_EQ(cudaGetDeviceFlags(&flags), cudaSuccess);
  return flags & cudaDeviceScheduleMask;
}

TEST(HostWaitTest, CudasAutomaticChoiceBecomesBlockingWaits) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaFree(nullptr), cudaSuccess);  // the context exists, as PyTorch's would
  ASSERT_EQ(cudaSetDeviceFlags(cudaDeviceScheduleAuto), cudaSuccess);
  ASSERT_EQ(Schedule(), unsigned{cudaDeviceScheduleAuto}) << "CUDA reports its automatic choice otherwise";
  ASSERT_TRUE(PreferBlockingWaits().ok());
  EXPECT_EQ(Schedule(), unsigned{cudaDeviceScheduleBlockingSync});
  int host = 7, back = 0;
  void* dev = nullptr;
  ASSERT_EQ(cudaMalloc(&dev, sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dev, &host, sizeof(int), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(&back, dev, sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(back, 7);
  cudaFree(dev);
}

TEST(HostWaitTest, AProcesssOwnChoiceStays) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  for (unsigned chosen : {unsigned{cudaDeviceScheduleSpin}, unsigned{cudaDeviceScheduleYield}}) {
    ASSERT_EQ(cudaSetDeviceFlags(chosen), cudaSuccess);
    ASSERT_TRUE(PreferBlockingWaits().ok());
    EXPECT_EQ(Schedule(), chosen);
  }
  ASSERT_EQ(cudaSetDeviceFlags(cudaDeviceScheduleAuto), cudaSuccess);
}

}  // namespace
}  // namespace sluice
