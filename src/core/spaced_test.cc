#include "core/spaced.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(Spaced, DueAtMostOncePerInterval) {
  Spaced s(100);
  EXPECT_TRUE(s.Due(1000));   // the first call
  EXPECT_FALSE(s.Due(1050));  // 50 after it
  EXPECT_FALSE(s.Due(1099));
  EXPECT_TRUE(s.Due(1100));   // a whole interval after the last due one
  EXPECT_FALSE(s.Due(1150));  // counted from 1100, not from 1000
  EXPECT_TRUE(s.Due(5000));
}

TEST(Spaced, ZeroMakesEveryCallDue) {
  Spaced s(0);
  for (int64_t t : {0, 0, 1, 2}) EXPECT_TRUE(s.Due(t));
}

}  // namespace
}  // namespace sluice
