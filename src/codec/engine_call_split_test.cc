#include "codec/engine_call_split.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

namespace sluice {
namespace {

using Sizes = std::vector<int>;
constexpr int kWidth = 224, kPads = 32, kBound = kWidth + kPads;  // an H200's engines, bounded slots

Sizes Split(int n, Sizes states, bool full_first, int bound = kBound) {
  return EngineCallSizes(n, kWidth, states, bound, kPads, full_first);
}

TEST(EngineCallSizes, BalancedCallsOfAtMostTheWidth) {
  EXPECT_EQ(Split(0, {}, false), Sizes{});
  EXPECT_EQ(Split(100, {}, false), Sizes{100});
  EXPECT_EQ(Split(224, {}, false), Sizes{224});
  EXPECT_EQ(Split(256, {}, false), (Sizes{128, 128}));  // `hardware` at batch 256
  EXPECT_EQ(Split(241, {}, false), (Sizes{121, 120}));
  EXPECT_EQ(Split(480, {}, false), (Sizes{160, 160, 160}));
  // Without full_calls_first the states do not matter.
  EXPECT_EQ(Split(240, {224}, false), (Sizes{120, 120}));
}

TEST(EngineCallSizes, FullCallsOfTheLargestStateWhereBalancedOnesWouldNotFit) {
  // `auto` holding calls of 224 probes 240 and 256 images: 120 and 128 neither fit the state of
  // 224 with at most 32 pads nor beside it within 256 slots.
  EXPECT_EQ(Split(240, {224}, true), (Sizes{224, 16}));
  EXPECT_EQ(Split(256, {224}, true), (Sizes{224, 32}));
  EXPECT_EQ(Split(256, {224, 32}, true), (Sizes{224, 32}));
  EXPECT_EQ(Split(480, {224}, true), (Sizes{224, 224, 32}));
  // Calls of n <= width stay one call.
  EXPECT_EQ(Split(208, {224}, true), Sizes{208});
}

TEST(EngineCallSizes, BalancedCallsWhereTheyFit) {
  EXPECT_EQ(Split(256, {128}, true), (Sizes{128, 128}));         // a state of their size
  EXPECT_EQ(Split(240, {130}, true), (Sizes{120, 120}));         // one they fill with 10 pads
  EXPECT_EQ(Split(240, {100}, true), (Sizes{120, 120}));         // a new state fits: 100 + 120 <= 256
  EXPECT_EQ(Split(240, {224}, true, std::numeric_limits<int>::max()), (Sizes{120, 120}));  // no bound
  // No state larger than a balanced call: nothing to fill.
  EXPECT_EQ(Split(240, {100, 100}, true), (Sizes{120, 120}));
}

TEST(EngineCallSizes, WhatFitsTheStates) {
  const Sizes states{224, 16};
  EXPECT_TRUE(CallFitsStates(224, states, kBound, kPads));
  EXPECT_TRUE(CallFitsStates(192, states, kBound, kPads));   // 32 pads
  EXPECT_FALSE(CallFitsStates(191, states, kBound, kPads));  // 33 pads; 240 + 191 > 256
  EXPECT_TRUE(CallFitsStates(16, states, kBound, kPads));
  EXPECT_FALSE(CallFitsStates(17, Sizes{224, 16}, kBound, kPads));  // 240 + 17 > 256; 16 < 17
  EXPECT_TRUE(CallFitsStates(16, Sizes{224}, kBound, kPads));       // 224 + 16 <= 256
  EXPECT_TRUE(CallFitsStates(120, Sizes{}, kBound, kPads));
}

}  // namespace
}  // namespace sluice
