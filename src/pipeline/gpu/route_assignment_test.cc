#include "pipeline/gpu/route_assignment.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace sluice {
namespace {

// An identity crop of [lo, lo + len) on one axis.
AxisMap Crop(int lo, int len) {
  AxisMap m;
  m.in_lo = lo;
  m.in_hi = lo + len;
  m.origin = lo;
  m.resized_len = m.out_len = len;
  m.identity = true;
  return m;
}

// A baseline 4:4:4 JPEG of 400 x 400 and `bytes` bytes whose one segment crops rows [y, y + h)
// and columns [0, 200).
GpuSample Sample(int y, int h, size_t bytes) {
  GpuSample s;
  s.info.format = ImageFormat::kJpeg;
  s.info.width = s.info.height = 400;
  s.info.subsampling = "444";
  s.intact = true;
  s.bytes.size = bytes;
  s.geo.num_segments = 1;
  s.geo.segments[0].x = Crop(0, 200);
  s.geo.segments[0].y = Crop(y, h);
  return s;
}

// The routes of a 256-sample batch planned by a fresh scheduler (engines that take sides of up
// to 1024, no hybrid decoder).
std::vector<DecodeRoute> Assign(std::vector<GpuSample> samples, DecodeRoute policy = DecodeRoute::kAuto) {
  GpuBatch b;
  b.gpu = std::move(samples);
  b.status.assign(b.gpu.size(), Status::OK());
  RouteScheduler scheduler(/*has_hardware=*/true, /*has_hybrid=*/false, /*cpu_threads=*/12);
  AssignRoutes(&b, policy, /*engine_max_side=*/1024, false, /*dct_scaling=*/false, &scheduler);
  std::vector<DecodeRoute> routes;
  for (const GpuSample& s : b.gpu) routes.push_back(s.route);
  return routes;
}

TEST(RouteAssignment, TheCpuSideGetsTheRegionsThatEndHighest) {
  // Same files and region sizes; the region's last row differs: libjpeg-turbo Huffman-decodes
  // every row above it, so the regions ending highest are the cheapest for the CPU side.
  std::vector<GpuSample> samples;
  std::vector<int> last_row;
  for (int i = 0; i < 256; ++i) {
    const int y = (i * 37) % 300;  // a permutation of region tops over the batch
    samples.push_back(Sample(y, 100, 100000));
    last_row.push_back(y + 100);
  }
  const std::vector<DecodeRoute> routes = Assign(samples);
  int cpu = 0, cpu_max = 0, hw_min = 1 << 30;
  for (int i = 0; i < 256; ++i) {
    if (routes[i] == DecodeRoute::kCpu) {
      ++cpu;
      cpu_max = std::max(cpu_max, last_row[i]);
    } else {
      ASSERT_EQ(routes[i], DecodeRoute::kHardware);
      hw_min = std::min(hw_min, last_row[i]);
    }
  }
  ASSERT_GT(cpu, 0);    // the start share (3/16 by the priors) sends some to the CPU side
  ASSERT_LT(cpu, 256);
  EXPECT_LE(cpu_max, hw_min);  // every CPU-side region ends no lower than any engine one
}

TEST(RouteAssignment, TheEnginesTakeTheLargestFiles) {
  // Same regions; file sizes differ: more bytes above the region's end, more Huffman decoding.
  std::vector<GpuSample> samples;
  for (int i = 0; i < 256; ++i) samples.push_back(Sample(0, 200, 50000 + static_cast<size_t>((i * 91) % 256) * 1000));
  const std::vector<DecodeRoute> routes = Assign(samples);
  size_t cpu_max = 0, hw_min = SIZE_MAX;
  for (int i = 0; i < 256; ++i) {
    const size_t bytes = samples[static_cast<size_t>(i)].bytes.size;
    if (routes[i] == DecodeRoute::kCpu) {
      cpu_max = std::max(cpu_max, bytes);
    } else {
      hw_min = std::min(hw_min, bytes);
    }
  }
  EXPECT_LT(cpu_max, hw_min);
}

TEST(RouteAssignment, SamplesTheEnginesCannotTakeStayOnTheCpuSide) {
  std::vector<GpuSample> samples;
  for (int i = 0; i < 256; ++i) samples.push_back(Sample(0, 100, 100000));
  samples[3].info.progressive = true;  // the engines take baseline files only
  samples[7].intact = false;           // a damaged bitstream goes to libjpeg-turbo
  const std::vector<DecodeRoute> routes = Assign(samples);
  EXPECT_EQ(routes[3], DecodeRoute::kCpu);
  EXPECT_EQ(routes[7], DecodeRoute::kCpu);
}

// An image with a side above the engines' limit would make nvJPEG grow its buffers towards its
// size: it goes elsewhere, with "hardware" pinned too.
TEST(RouteAssignment, ImagesLargerThanTheEnginesTakeGoElsewhere) {
  for (DecodeRoute policy : {DecodeRoute::kAuto, DecodeRoute::kHardware}) {
    std::vector<GpuSample> samples;
    for (int i = 0; i < 256; ++i) samples.push_back(Sample(0, 100, 400000));
    samples[5].info.width = 1025;  // one side too long
    samples[9].info.height = 1025;
    samples[11].info.width = samples[11].info.height = 1024;  // just fits
    const std::vector<DecodeRoute> routes = Assign(samples, policy);
    EXPECT_EQ(routes[5], DecodeRoute::kCpu) << DecodeRouteName(policy);
    EXPECT_EQ(routes[9], DecodeRoute::kCpu) << DecodeRouteName(policy);
    if (policy == DecodeRoute::kHardware) {
      EXPECT_EQ(routes[11], DecodeRoute::kHardware);
    }
  }
}

}  // namespace
}  // namespace sluice
