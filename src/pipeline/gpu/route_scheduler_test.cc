#include "pipeline/gpu/route_scheduler.h"

#include <gtest/gtest.h>

#include <cmath>

namespace sluice {
namespace {

// A simulated machine: the engines decode `hw_rate` images/s, the CPU side `cpu_rate`; a batch's
// side takes its samples over its rate. The share must settle where both take as long.
double Settle(double hw_rate, double cpu_rate, int batches) {
  RouteScheduler s(16, true, true);
  for (int b = 0; b < batches; ++b) {
    const RouteScheduler::Split split = s.Plan(256, 256);
    const int cpu = 256 - split.hardware;
    s.RecordBatch(split.hardware > 0 ? split.hardware / hw_rate : -1, cpu > 0 ? cpu / cpu_rate : -1);
  }
  return s.cpu_share();
}

TEST(RouteScheduler, ShareSettlesWhereBothSidesFinishTogether) {
  // 16,000 vs 4,000 images/s: the CPU side should take 20% of a batch.
  EXPECT_NEAR(Settle(16000, 4000, 200), 0.2, 0.05);
  // A slow CPU side (1,000 images/s): about 6%.
  EXPECT_NEAR(Settle(16000, 1000, 200), 1.0 / 17, 0.04);
  // Engines slower than the CPU side: most goes to the CPU.
  EXPECT_NEAR(Settle(2000, 6000, 200), 0.75, 0.05);
}

TEST(RouteScheduler, HardwareTakesOnlyEligibleSamples) {
  RouteScheduler s(4, true, true);
  EXPECT_LE(s.Plan(256, 10).hardware, 10);
  EXPECT_EQ(s.Plan(256, 0).hardware, 0);
}

TEST(RouteScheduler, EngineShareComesInGrainsForFewCallSizes) {
  // Whatever the share settles at, a batch of 256 sends a multiple of 16 to the engines (at
  // most 16 sizes, so the engines' decoder re-initializes nothing); a small batch, any number.
  RouteScheduler s(8, true, true);
  for (int b = 0; b < 200; ++b) {
    const RouteScheduler::Split split = s.Plan(256, 256);
    EXPECT_EQ(split.hardware % RouteScheduler::kHardwareGrain, 0) << split.hardware;
    s.RecordBatch(b % 3 == 0 ? 0.2 : 0.1, 0.15);  // the share wanders
  }
  EXPECT_EQ(s.Plan(256, 40).hardware % RouteScheduler::kHardwareGrain, 0);
  EXPECT_LE(s.Plan(256, 40).hardware, 40);
  EXPECT_LE(s.Plan(256, 7).hardware, 7);
  RouteScheduler small(1, true, true);  // a CPU side of one thread: the engines take most
  EXPECT_EQ(small.Plan(32, 32).hardware % (RouteScheduler::kHardwareGrain / 2), 0);
  EXPECT_GT(small.Plan(32, 32).hardware, 0);
  EXPECT_GT(small.Plan(10, 10).hardware, 0);
}

TEST(RouteScheduler, PicksTheCheaperCpuSideRouteAndExplores) {
  RouteScheduler s(8, false, true);
  for (int i = 0; i < 50; ++i) {
    s.RecordCpuSide(DecodeRoute::kCpu, 10, 0.05);
    s.RecordCpuSide(DecodeRoute::kHybrid, 10, 0.02);
  }
  EXPECT_NEAR(s.cpu_cost(DecodeRoute::kHybrid), 0.002, 1e-4);
  int explored = 0;
  for (int b = 0; b < 16; ++b) {
    const RouteScheduler::Split split = s.Plan(64, 64);
    EXPECT_EQ(split.hardware, 0);  // no engines
    EXPECT_EQ(split.cpu_side, DecodeRoute::kHybrid);
    explored += split.explore > 0;
  }
  EXPECT_EQ(explored, 2);  // every 8th batch
}

TEST(RouteScheduler, WithoutHybridEverythingCpuSideIsCpu) {
  RouteScheduler s(8, true, false);
  for (int i = 0; i < 20; ++i) s.RecordCpuSide(DecodeRoute::kHybrid, 10, 1e-6);
  const RouteScheduler::Split split = s.Plan(64, 64);
  EXPECT_EQ(split.cpu_side, DecodeRoute::kCpu);
  EXPECT_EQ(split.explore, 0);
}

TEST(RouteScheduler, RouteNames) {
  for (int i = 0; i < kNumRoutes; ++i) EXPECT_EQ(RouteIndex(kRoutes[i]), i);
  EXPECT_STREQ(DecodeRouteName(kRoutes[0]), "hardware");
  EXPECT_STREQ(DecodeRouteName(kRoutes[1]), "hybrid");
  EXPECT_STREQ(DecodeRouteName(kRoutes[2]), "cpu");
}

}  // namespace
}  // namespace sluice
