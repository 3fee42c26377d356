// GatherQueue: jobs come out oldest first, several at a time up to an image count, each once.
#include "pipeline/gpu/gather_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace sluice {
namespace {

TEST(GatherQueue, TakesTheOldestJobsWhileTheirImagesFit) {
  GatherQueue<int> q;
  EXPECT_TRUE(q.Take(224).empty());
  for (int job = 0; job < 5; ++job) q.Push(job, 25);
  EXPECT_EQ(q.Take(60), (std::vector<int>{0, 1}));  // 50 fit, 75 would not
  EXPECT_EQ(q.Take(224), (std::vector<int>{2, 3, 4}));
  EXPECT_EQ(q.size(), 0u);
}

TEST(GatherQueue, TheOldestJobComesOutEvenWhenItIsLargerThanTheLimit) {
  GatherQueue<int> q;
  q.Push(7, 300);
  q.Push(8, 10);
  EXPECT_EQ(q.Take(224), (std::vector<int>{7}));  // a later job is not taken past a larger one
  EXPECT_EQ(q.Take(224), (std::vector<int>{8}));
}

TEST(GatherQueue, OrderIsKeptAtTheFirstJobThatDoesNotFit) {
  GatherQueue<int> q;
  q.Push(1, 100);
  q.Push(2, 200);
  q.Push(3, 10);
  EXPECT_EQ(q.Take(224), (std::vector<int>{1}));  // 3 would fit after 1, but 2 is older
  EXPECT_EQ(q.Take(224), (std::vector<int>{2, 3}));
}

TEST(GatherQueue, EveryJobIsTakenOnceAcrossThreads) {
  GatherQueue<int> q;
  constexpr int kJobs = 20000;
  std::vector<std::atomic<int>> seen(kJobs);
  std::atomic<bool> pushed{false};
  std::vector<std::thread> takers;
  for (int t = 0; t < 3; ++t)
    takers.emplace_back([&] {
      while (!pushed.load() || q.size() > 0)
        for (int job : q.Take(64)) seen[static_cast<size_t>(job)].fetch_add(1);
    });
  for (int job = 0; job < kJobs; ++job) q.Push(job, 1 + job % 40);
  pushed.store(true);
  for (auto& t : takers) t.join();
  for (int job = 0; job < kJobs; ++job) ASSERT_EQ(seen[static_cast<size_t>(job)].load(), 1) << "job " << job;
}

}  // namespace
}  // namespace sluice
