#include "pipeline/route_scheduler.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(RouteScheduler, SplitsSoBothSidesFinishTogether) {
  RouteScheduler s(16, true, true);
  // Engines: 16,000 images/s. CPU: 4 ms per image on 16 threads = 4,000 images/s.
  for (int i = 0; i < 50; ++i) {
    s.RecordHardware(1600, 0.1);
    s.RecordCpuSide(Route::kCpu, 100, 0.4);
    s.RecordCpuSide(Route::kHybrid, 100, 0.6);
  }
  const RouteScheduler::Split split = s.Plan(250, 250);
  EXPECT_EQ(split.hardware, 200);  // 200 / 16000 = 50 / 4000
  EXPECT_EQ(split.cpu_side, Route::kCpu);
}

TEST(RouteScheduler, HardwareTakesOnlyEligibleSamples) {
  RouteScheduler s(4, true, true);
  EXPECT_LE(s.Plan(256, 10).hardware, 10);
  EXPECT_EQ(s.Plan(256, 0).hardware, 0);
}

TEST(RouteScheduler, PicksTheCheaperCpuSideRouteAndExplores) {
  RouteScheduler s(8, false, true);
  for (int i = 0; i < 50; ++i) {
    s.RecordCpuSide(Route::kCpu, 10, 0.05);
    s.RecordCpuSide(Route::kHybrid, 10, 0.02);
  }
  int explored = 0;
  for (int b = 0; b < 16; ++b) {
    const RouteScheduler::Split split = s.Plan(64, 64);
    EXPECT_EQ(split.hardware, 0);  // no engines
    EXPECT_EQ(split.cpu_side, Route::kHybrid);
    explored += split.explore > 0;
  }
  EXPECT_EQ(explored, 2);  // every 8th batch
}

TEST(RouteScheduler, WithoutHybridEverythingCpuSideIsCpu) {
  RouteScheduler s(8, true, false);
  for (int i = 0; i < 20; ++i) s.RecordCpuSide(Route::kHybrid, 10, 1e-6);  // ignored in Plan
  const RouteScheduler::Split split = s.Plan(64, 64);
  EXPECT_EQ(split.cpu_side, Route::kCpu);
  EXPECT_EQ(split.explore, 0);
}

TEST(RouteScheduler, RouteNames) {
  EXPECT_STREQ(RouteName(Route::kHardware), "hardware");
  EXPECT_STREQ(RouteName(Route::kHybrid), "hybrid");
  EXPECT_STREQ(RouteName(Route::kCpu), "cpu");
}

}  // namespace
}  // namespace sluice
