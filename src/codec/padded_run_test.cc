#include "codec/padded_run.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

constexpr int kCalls = PaddedRun::kCalls;

TEST(PaddedRunTest, ASizePaddedCallAfterCallEarnsAStateOnTheLastOfTheRun) {
  PaddedRun run;
  for (int i = 1; i < kCalls; ++i) EXPECT_FALSE(run.Padded(192)) << "call " << i;
  EXPECT_TRUE(run.Padded(192));
  EXPECT_TRUE(run.Padded(192));  // still, should making the state have failed
}

TEST(PaddedRunTest, AnotherSizeStartsTheCountAgain) {
  PaddedRun run;
  for (int i = 1; i < kCalls; ++i) run.Padded(192);
  EXPECT_FALSE(run.Padded(176));  // a probe of another share
  for (int i = 1; i < kCalls; ++i) EXPECT_FALSE(run.Padded(192)) << "call " << i;
  EXPECT_TRUE(run.Padded(192));
}

TEST(PaddedRunTest, AnExactCallBreaksTheRun) {
  PaddedRun run;
  for (int i = 1; i < kCalls; ++i) run.Padded(192);
  run.Exact();  // e.g. the other engine thread's call of 128 in a state of 128
  EXPECT_FALSE(run.Padded(192));
}

// A run of 0 calls (the experiment knob SLUICE_ENGINE_PADDED_CALLS=0): pads for ever, as before.
TEST(PaddedRunTest, ARunOfNoCallsNeverEarnsAState) {
  PaddedRun run;
  for (int i = 0; i < 4 * kCalls; ++i) EXPECT_FALSE(run.Padded(192, 0));
  EXPECT_TRUE(run.Padded(192, 1));  // however long the run, one call is enough then
}

// An epoch's short last batch comes once between full ones: it never earns a state.
TEST(PaddedRunTest, ASizeThatComesOnceBetweenOthersInitializesNothing) {
  PaddedRun run;
  for (int epoch = 0; epoch < 10; ++epoch) {
    for (int call = 0; call < 2 * kCalls; ++call) run.Exact();  // the full batches' calls
    EXPECT_FALSE(run.Padded(100));                                // the last batch's
  }
}

}  // namespace
}  // namespace sluice
