// The GPU YUV-to-RGB kernel against the CPU's on the same random pictures (I420 and NV12, odd and
// even sizes, every matrix and range): identical bytes. Skipped without a GPU.
#include "kernels/yuv/yuv_gpu.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "gpu/device.h"
#include "kernels/gpu_kernel_test_util.h"
#include "kernels/yuv/yuv_cpu.h"

namespace sluice {
namespace {

using gpu_test::DeviceBytes;

TEST(YuvGpu, MatchesCpu) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(11);
  for (const auto& [h, w] : {std::pair{1, 1}, {7, 5}, {48, 64}, {121, 203}}) {
    for (const bool nv12 : {false, true}) {
      for (const YuvMatrix m : {YuvMatrix::kBt601, YuvMatrix::kBt709, YuvMatrix::kBt2020}) {
        const bool full = (rng() & 1) != 0;
        // Luma then chroma (two planes, or one interleaved), rows padded, in one buffer.
        const int ch = (h + 1) / 2, cw = (w + 1) / 2, ys = w + 3, cs = nv12 ? 2 * cw + 1 : cw + 2;
        const size_t luma = static_cast<size_t>(ys) * h, chroma = static_cast<size_t>(cs) * ch;
        std::vector<uint8_t> host(luma + chroma * 2);
        for (auto& b : host) b = static_cast<uint8_t>(rng());
        DeviceBytes dev(host.size()), out(static_cast<size_t>(h) * w * 3, 0xAB);
        ASSERT_EQ(cudaMemcpy(dev.get(), host.data(), host.size(), cudaMemcpyHostToDevice), cudaSuccess);
        auto view = [&](const uint8_t* base) {
          YuvView v{base, base + luma, nv12 ? base + luma + 1 : base + luma + chroma, ys, cs, nv12 ? 2 : 1, h, w, m,
                    full};
          return v;
        };
        std::vector<uint8_t> want(static_cast<size_t>(h) * w * 3), got(want.size());
        YuvToRgbCpu(view(host.data()), MutableImageView{want.data(), h, w, 3, static_cast<ptrdiff_t>(w) * 3});
        ASSERT_EQ(LaunchYuvToRgb(view(dev.get()), out.get(), static_cast<ptrdiff_t>(w) * 3, nullptr), cudaSuccess);
        ASSERT_EQ(cudaMemcpy(got.data(), out.get(), got.size(), cudaMemcpyDeviceToHost), cudaSuccess);
        EXPECT_EQ(got, want) << h << "x" << w << " nv12=" << nv12 << " matrix=" << static_cast<int>(m);
      }
    }
  }
}

}  // namespace
}  // namespace sluice
