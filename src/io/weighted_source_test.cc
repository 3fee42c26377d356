#include "io/weighted_source.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

namespace sluice {
namespace {

std::shared_ptr<const Source> List(int n) {
  std::vector<Sample> samples;
  for (int i = 0; i < n; ++i) samples.push_back(Sample{"img_" + std::to_string(i) + ".jpg", i});
  return *Source::FromList(std::move(samples));
}

TEST(WeightedSourceTest, WithReplacementFollowsTheWeights) {
  // Weights 0, 1, 3: over 200 epochs of 3 draws, sample 2 takes about 3/4 and sample 0 none.
  Result<std::shared_ptr<const Source>> s = WeightedSource::Create(List(3), {0.0, 1.0, 3.0}, true);
  ASSERT_TRUE(s.ok()) << s.status().message();
  int counts[3] = {0, 0, 0};
  for (int64_t e = 0; e < 200; ++e)
    for (int64_t i : (*s)->EpochOrder(false, 5, e, 1)) ++counts[i];
  EXPECT_EQ(counts[0], 0);
  EXPECT_NEAR(counts[2] / 600.0, 0.75, 0.05);
  EXPECT_EQ((*s)->EpochOrder(false, 5, 7, 1), (*s)->EpochOrder(true, 5, 7, 4));  // shuffle, ranks: unused
  EXPECT_NE((*s)->EpochOrder(false, 5, 7, 1), (*s)->EpochOrder(false, 5, 8, 1));
}

TEST(WeightedSourceTest, WithoutReplacementIsAPermutation) {
  Result<std::shared_ptr<const Source>> s = WeightedSource::Create(List(50), std::vector<double>(50, 1.0), false);
  ASSERT_TRUE(s.ok());
  std::vector<int64_t> order = (*s)->EpochOrder(false, 1, 0, 1);
  std::sort(order.begin(), order.end());
  std::vector<int64_t> all(50);
  std::iota(all.begin(), all.end(), int64_t{0});
  EXPECT_EQ(order, all);
}

TEST(WeightedSourceTest, BadWeightsNameTheProblem) {
  EXPECT_NE(WeightedSource::Create(List(3), {1.0, 1.0}, true).status().message().find("one weight per sample (3)"),
            std::string::npos);
  EXPECT_NE(WeightedSource::Create(List(2), {1.0, -2.0}, true).status().message().find(">= 0, got -2"),
            std::string::npos);
  EXPECT_NE(WeightedSource::Create(List(2), {0.0, 1.0}, false).status().message().find("img_0.jpg"), std::string::npos);
  // The digest depends on the weights and the mode (a resume checks it).
  const uint64_t a = (*WeightedSource::Create(List(2), {1.0, 2.0}, true))->Digest();
  EXPECT_NE(a, (*WeightedSource::Create(List(2), {1.0, 3.0}, true))->Digest());
  EXPECT_NE(a, (*WeightedSource::Create(List(2), {1.0, 2.0}, false))->Digest());
}

}  // namespace
}  // namespace sluice
