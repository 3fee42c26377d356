#include "core/env_knob.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <vector>

namespace sluice {
namespace {

TEST(EnvKnob, ANumberOrTheFallback) {
  unsetenv("SLUICE_TEST_KNOB");
  EXPECT_EQ(EnvKnob("SLUICE_TEST_KNOB", 7), 7);
  setenv("SLUICE_TEST_KNOB", "0.1875", 1);
  EXPECT_EQ(EnvKnob("SLUICE_TEST_KNOB", 7), 0.1875);
  for (const char* bad : {"", "abc", "3x"}) {
    setenv("SLUICE_TEST_KNOB", bad, 1);
    EXPECT_EQ(EnvKnob("SLUICE_TEST_KNOB", 7), 7) << bad;
  }
  unsetenv("SLUICE_TEST_KNOB");
}

TEST(EnvKnob, WholeNumbersSeparatedByCommasOrColons) {
  unsetenv("SLUICE_TEST_KNOBS");
  EXPECT_TRUE(EnvKnobInts("SLUICE_TEST_KNOBS").empty());
  setenv("SLUICE_TEST_KNOBS", "128:224,16", 1);
  EXPECT_EQ(EnvKnobInts("SLUICE_TEST_KNOBS"), (std::vector<int>{128, 224, 16}));
  setenv("SLUICE_TEST_KNOBS", "64,x", 1);  // stops at what is not a number
  EXPECT_EQ(EnvKnobInts("SLUICE_TEST_KNOBS"), (std::vector<int>{64}));
  unsetenv("SLUICE_TEST_KNOBS");
}

}  // namespace
}  // namespace sluice
