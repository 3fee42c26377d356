// Test code shared by the GPU kernel tests (resize, warp, colour): the finish step's parameters
// with their lookup tables on the device, device memory freed at scope exit, and the check of a
// launch's outputs against the CPU kernels' bytes.
//
// Thread-safety: test helpers, one thread.
#ifndef SLUICE_KERNELS_GPU_KERNEL_TEST_UTIL_H_
#define SLUICE_KERNELS_GPU_KERNEL_TEST_UTIL_H_

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "kernels/finish/finish_cpu.h"
#include "kernels/resize/resize_gpu.h"

namespace sluice::gpu_test {

// Device memory of `bytes` bytes, optionally filled with a poison byte (so that a kernel that
// misses an element shows up), freed when it goes out of scope.
class DeviceBytes {
 public:
  explicit DeviceBytes(size_t bytes, int poison = -1) {
    EXPECT_EQ(cudaMalloc(&p_, bytes == 0 ? 1 : bytes), cudaSuccess);
    if (poison >= 0) {
      EXPECT_EQ(cudaMemset(p_, poison, bytes), cudaSuccess);
    }
  }
  ~DeviceBytes() { cudaFree(p_); }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  uint8_t* get() const { return static_cast<uint8_t*>(p_); }
  template <typename T>
  T* as() const { return static_cast<T*>(p_); }

 private:
  void* p_ = nullptr;
};

// The finish step for dtype and layout (normalized with mean and std when `normalize`), its
// tables, and the same on the device for the kernels.
struct TestFinish {
  FinishParams params;
  FinishLut lut;
  DeviceBytes tables{sizeof(FinishLut::f32) + sizeof(FinishLut::f16)};
  GpuFinish gpu;

  TestFinish(DType dtype, Layout layout, bool normalize, std::array<float, 3> mean, std::array<float, 3> std) {
    params.dtype = dtype;
    params.layout = layout;
    params.normalize = normalize;
    for (size_t c = 0; c < 3; ++c) params.mean[c] = mean[c], params.std[c] = std[c];
    lut = FinishLut::Build(params);
    EXPECT_EQ(cudaMemcpy(tables.get(), lut.f32, sizeof(lut.f32), cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(tables.get() + sizeof(lut.f32), lut.f16, sizeof(lut.f16), cudaMemcpyHostToDevice),
              cudaSuccess);
    gpu = GpuFinish{dtype, layout, tables.as<const float>(),
                    reinterpret_cast<const uint16_t*>(tables.get() + sizeof(lut.f32))};
  }
  size_t element_size() const { return DTypeSize(params.dtype); }
};

// Waits for the device, copies the outputs back from `outputs` (the samples' bytes one after
// the other) and expects each sample's bytes to equal expected[i]; describe(i) names sample i.
inline void ExpectOutputsEqual(const DeviceBytes& outputs, const std::vector<std::vector<uint8_t>>& expected,
                               const std::function<std::string(size_t)>& describe) {
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  size_t total = 0;
  for (const auto& e : expected) total += e.size();
  std::vector<uint8_t> got(total);
  ASSERT_EQ(cudaMemcpy(got.data(), outputs.get(), total, cudaMemcpyDeviceToHost), cudaSuccess);
  size_t off = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(std::memcmp(got.data() + off, expected[i].data(), expected[i].size()), 0) << describe(i);
    off += expected[i].size();
  }
}

}  // namespace sluice::gpu_test

#endif  // SLUICE_KERNELS_GPU_KERNEL_TEST_UTIL_H_
