#include "sluice/status.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

Result<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgument("odd: ", x);
  return x / 2;
}

Result<int> Quarter(int x) {
  SLUICE_ASSIGN_OR_RETURN(int h, Half(x));
  SLUICE_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

TEST(StatusTest, OkAndErrors) {
  EXPECT_TRUE(Status::OK().ok());
  Status s = CorruptData("bad ", 3);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kCorruptData);
  EXPECT_EQ(s.message(), "bad 3");
  EXPECT_EQ(s.ToString(), "CorruptData: bad 3");
  EXPECT_EQ(s.WithPrefix("a.jpg").message(), "a.jpg: bad 3");
  EXPECT_TRUE(Status::OK().WithPrefix("x").ok());
}

TEST(StatusTest, ResultPropagates) {
  EXPECT_EQ(*Quarter(8), 2);
  Result<int> r = Quarter(6);  // 6 -> 3 -> odd
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "odd: 3");
}

TEST(StatusTest, ResultFromOkStatusIsInternalError) {
  Result<int> r{Status::OK()};
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
}

}  // namespace
}  // namespace sluice
