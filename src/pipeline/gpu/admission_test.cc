#include "pipeline/gpu/admission.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

constexpr int64_t kMB = 1000 * 1000;

TEST(AdmissionTest, TheFirstBatchNeedsItsEstimateWithAQuarterOfHeadroom) {
  // 400 MB estimated: 500 MB with headroom.
  EXPECT_TRUE(AdmitsAnother(0, {}, 400 * kMB, 500 * kMB));
  EXPECT_FALSE(AdmitsAnother(0, {}, 400 * kMB, 500 * kMB - 1));
}

TEST(AdmissionTest, WhatLaidOutBatchesAllocateAtLaunchCountsAsInUse) {
  // A batch being decoded holds its arena (in use) and will take its output at launch: it must
  // leave as little room as when its output was allocated up front.
  const int64_t budget = 1000 * kMB, estimate = 200 * kMB;  // 250 MB with headroom
  EXPECT_TRUE(AdmitsAnother(500 * kMB, InFlightMemory{250 * kMB, 0}, estimate, budget));
  EXPECT_FALSE(AdmitsAnother(500 * kMB, InFlightMemory{250 * kMB + 1, 0}, estimate, budget));
  EXPECT_TRUE(AdmitsAnother(750 * kMB, InFlightMemory{0, 0}, estimate, budget));
  EXPECT_FALSE(AdmitsAnother(750 * kMB + 1, InFlightMemory{0, 0}, estimate, budget));
}

TEST(AdmissionTest, EachBatchNotYetLaidOutCountsAsAnEstimate) {
  const int64_t estimate = 100 * kMB;  // 125 MB with headroom
  EXPECT_TRUE(AdmitsAnother(0, InFlightMemory{0, 3}, estimate, 500 * kMB));   // 4 x 125
  EXPECT_FALSE(AdmitsAnother(0, InFlightMemory{0, 4}, estimate, 500 * kMB));  // 5 x 125
  EXPECT_FALSE(AdmitsAnother(1, InFlightMemory{0, 3}, estimate, 500 * kMB));
}

}  // namespace
}  // namespace sluice
