#include "core/timed_mutex.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace sluice {
namespace {

using std::chrono::milliseconds;

TEST(TimedMutexTest, TimedLockWaitsForTheHolderOrGivesUp) {
  TimedMutex mu;
  mu.lock();
  EXPECT_FALSE(mu.try_lock());
  std::atomic<bool> gave_up{false};
  std::thread other([&] {
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_FALSE(mu.try_lock_for(milliseconds(50)));  // held until it gives up
    EXPECT_GE(std::chrono::steady_clock::now() - t0, milliseconds(50));
    gave_up.store(true);
    EXPECT_TRUE(mu.try_lock_for(std::chrono::seconds(10)));  // released below
    mu.unlock();
  });
  while (!gave_up.load()) std::this_thread::sleep_for(milliseconds(1));
  std::this_thread::sleep_for(milliseconds(20));  // most likely waiting in the second try by now
  mu.unlock();
  other.join();
  EXPECT_TRUE(mu.try_lock());
  mu.unlock();
}

TEST(TimedMutexTest, ExcludesAcrossThreads) {
  TimedMutex mu;
  int64_t counter = 0;  // a data race (and a wrong total) without the mutex
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20000; ++i) {
        if (t % 2 == 0) {
          std::lock_guard<TimedMutex> lock(mu);
          ++counter;
        } else {
          while (!mu.try_lock_for(milliseconds(1))) {
          }
          ++counter;
          mu.unlock();
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(counter, 80000);
}

}  // namespace
}  // namespace sluice
