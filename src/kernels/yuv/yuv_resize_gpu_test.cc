// The fused YUV-to-RGB + resize + finish kernel against the CPU kernels in turn (YuvToRgbCpu,
// ResizeCpu, FinishCpu) on random pictures (I420 and NV12, odd and even sizes, every matrix and
// range) with random crops, flips and downscales, several descriptors reading one picture in one
// launch: identical bytes. Skipped without a GPU.
#include "kernels/yuv/yuv_resize_gpu.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpu/device.h"
#include "kernels/gpu_kernel_test_util.h"
#include "kernels/yuv/yuv_cpu.h"

namespace sluice {
namespace {

using gpu_test::DeviceBytes;

int Uniform(std::mt19937& rng, int lo, int hi) {  // in [lo, hi]
  return lo + static_cast<int>(rng() % static_cast<unsigned>(hi - lo + 1));
}

// A random window [lo, hi) of the axis resized to `out`, maybe flipped.
AxisMap CropTo(std::mt19937& rng, int len, int out) {
  AxisMap m;
  m.in_lo = Uniform(rng, 0, len / 3);
  m.in_hi = Uniform(rng, m.in_lo + 1, len);
  m.origin = m.in_lo;
  m.resized_len = m.out_len = out;
  m.scale = static_cast<double>(m.in_hi - m.in_lo) / out;
  m.flip = rng() % 2 == 0;
  m.identity = out == m.in_hi - m.in_lo;
  return m;
}

TEST(YuvResizeGpu, MatchesCpuKernelsInTurn) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(23);
  const gpu_test::TestFinish fin(DType::kFloat16, Layout::kNCHW, true, {0.485f, 0.456f, 0.406f},
                                 {0.229f, 0.224f, 0.225f});
  for (const auto& [h, w] : {std::pair{9, 7}, {120, 160}, {181, 323}}) {
    for (const bool nv12 : {false, true}) {
      for (const YuvMatrix matrix : {YuvMatrix::kBt601, YuvMatrix::kBt709, YuvMatrix::kBt2020}) {
        const bool full = (rng() & 1) != 0;
        // Luma then chroma (two planes, or one interleaved), rows padded, in one buffer.
        const int ch = (h + 1) / 2, cw = (w + 1) / 2, ys = w + 5, cs = nv12 ? 2 * cw + 3 : cw + 2;
        const size_t luma = static_cast<size_t>(ys) * h, chroma = static_cast<size_t>(cs) * ch;
        std::vector<uint8_t> host(luma + chroma * 2);
        for (auto& b : host) b = static_cast<uint8_t>(rng());
        const DeviceBytes dev(host.size());
        ASSERT_EQ(cudaMemcpy(dev.get(), host.data(), host.size(), cudaMemcpyHostToDevice), cudaSuccess);
        auto view = [&](const uint8_t* base) {
          return YuvView{base, base + luma, nv12 ? base + luma + 1 : base + luma + chroma, ys, cs, nv12 ? 2 : 1,
                         h, w, matrix, full};
        };
        // The reference: the whole picture to RGB, then each descriptor's resize and finish.
        std::vector<uint8_t> rgb(static_cast<size_t>(h) * w * 3);
        YuvToRgbCpu(view(host.data()), MutableImageView{rgb.data(), h, w, 3, static_cast<ptrdiff_t>(w) * 3});
        constexpr int kSamples = 3;
        std::vector<ResizeParams> params(kSamples);
        std::vector<std::vector<uint8_t>> expected;
        int64_t words = 0;
        for (ResizeParams& p : params) {
          p.x = CropTo(rng, w, Uniform(rng, 1, 64));
          p.y = CropTo(rng, h, Uniform(rng, 1, 48));
          const int oh = p.y.out_len, ow = p.x.out_len;
          std::vector<uint8_t> mid(static_cast<size_t>(oh) * ow * 3);
          ResizeScratch scratch;
          const MutableImageView m{mid.data(), oh, ow, 3, static_cast<ptrdiff_t>(ow) * 3};
          ResizeCpu(p, ImageView{rgb.data(), h, w, 3, static_cast<ptrdiff_t>(w) * 3}, m, &scratch);
          expected.emplace_back(mid.size() * fin.element_size());
          FinishCpu(fin.params, fin.lut, m, expected.back().data());
          words += ResizeTapWords(p);
        }
        size_t out_total = 0;
        for (const auto& e : expected) out_total += e.size();
        const DeviceBytes out(out_total, 0xA5), taps_dev(static_cast<size_t>(words) * 4),
            desc_dev(sizeof(GpuResizeSample) * kSamples);
        std::vector<int32_t> taps(static_cast<size_t>(words));
        std::vector<GpuResizeSample> desc(kSamples);
        int64_t tap_off = 0;
        size_t out_off = 0;
        int max_tiles = 0;
        ResizeScratch scratch;
        for (int i = 0; i < kSamples; ++i) {
          GpuResizeSample& d = desc[static_cast<size_t>(i)];
          d.in_h = h, d.in_w = w;
          d.out = out.get() + out_off;
          d.out_h = params[static_cast<size_t>(i)].y.out_len, d.out_w = params[static_cast<size_t>(i)].x.out_len;
          ASSERT_TRUE(PackResizeTaps(params[static_cast<size_t>(i)], tap_off, taps.data() + tap_off, &scratch, &d).ok());
          max_tiles = std::max(max_tiles, ResizeTiles(d));
          tap_off += ResizeTapWords(params[static_cast<size_t>(i)]);
          out_off += expected[static_cast<size_t>(i)].size();
        }
        ASSERT_EQ(cudaMemcpy(taps_dev.get(), taps.data(), taps.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
        ASSERT_EQ(cudaMemcpy(desc_dev.get(), desc.data(), sizeof(GpuResizeSample) * kSamples, cudaMemcpyHostToDevice),
                  cudaSuccess);
        ASSERT_EQ(LaunchYuvResizeFinish(view(dev.get()), desc_dev.as<GpuResizeSample>(), kSamples, max_tiles,
                                        taps_dev.as<int32_t>(), fin.gpu, nullptr),
                  cudaSuccess);
        gpu_test::ExpectOutputsEqual(out, expected, [&](size_t i) {
          return std::to_string(w) + "x" + std::to_string(h) + " nv12=" + std::to_string(nv12) +
                 " matrix=" + std::to_string(static_cast<int>(matrix)) + " sample " + std::to_string(i);
        });
      }
    }
  }
}

}  // namespace
}  // namespace sluice
