#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace sluice {
namespace {

TEST(ThreadPoolTest, RunsEveryTaskOnceWithValidWorkerIndex) {
  constexpr int kTasks = 2000;
  std::vector<std::atomic<int>> runs(kTasks);
  std::atomic<int> bad_worker{0};
  std::mutex mu;
  std::vector<int> workers_seen;
  {
    ThreadPool pool(3, "test");
    EXPECT_EQ(pool.size(), 3);
    for (int i = 0; i < kTasks; ++i) {
      pool.Submit([&, i](int worker) {
        if (worker < 0 || worker >= 3) bad_worker.fetch_add(1);
        runs[static_cast<size_t>(i)].fetch_add(1);
        std::lock_guard<std::mutex> lock(mu);
        workers_seen.push_back(worker);
      });
    }
  }  // destructor waits for every queued task
  for (int i = 0; i < kTasks; ++i) ASSERT_EQ(runs[static_cast<size_t>(i)].load(), 1) << i;
  EXPECT_EQ(bad_worker.load(), 0);
  EXPECT_EQ(workers_seen.size(), static_cast<size_t>(kTasks));
}

TEST(ThreadPoolTest, SingleWorkerRunsInSubmissionOrder) {
  std::vector<int> order;
  {
    ThreadPool pool(1, "fifo");
    for (int i = 0; i < 100; ++i)
      pool.Submit([&order, i](int worker) {
        EXPECT_EQ(worker, 0);
        order.push_back(i);
      });
  }
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[static_cast<size_t>(i)], i);
}

TEST(ThreadPoolTest, WorkersRunConcurrently) {
  // Two tasks that each wait for the other to start can only finish on two threads at once.
  std::atomic<int> started{0};
  std::atomic<int> met{0};
  {
    ThreadPool pool(2, "pair");
    for (int t = 0; t < 2; ++t) {
      pool.Submit([&](int) {
        started.fetch_add(1);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (started.load() < 2 && std::chrono::steady_clock::now() < deadline)
          std::this_thread::yield();
        if (started.load() == 2) met.fetch_add(1);
      });
    }
  }
  EXPECT_EQ(met.load(), 2);
}

TEST(ThreadPoolTest, TasksSubmittedFromTasksRun) {
  // A binary tree of depth 9 (511 tasks), each node submitting its children.
  std::atomic<int> count{0};
  {
    ThreadPool pool(2, "tree");
    struct Spawner {
      ThreadPool* pool;
      std::atomic<int>* count;
      void operator()(int depth) const {
        count->fetch_add(1);
        if (depth == 0) return;
        const Spawner self = *this;
        for (int c = 0; c < 2; ++c) pool->Submit([self, depth](int) { self(depth - 1); });
      }
    };
    const Spawner root{&pool, &count};
    pool.Submit([root](int) { root(8); });
    // Leave at once: the destructor must drain tasks that are submitted while it waits.
  }
  EXPECT_EQ(count.load(), 511);
}

TEST(ThreadPoolTest, DestructorDrainsTheQueue) {
  std::atomic<int> done{0};
  {
    ThreadPool pool(1, "drain");
    pool.Submit([&](int) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      done.fetch_add(1);
    });
    for (int i = 0; i < 200; ++i) pool.Submit([&](int) { done.fetch_add(1); });
    // The first task is still sleeping: nearly everything is queued when the destructor runs.
  }
  EXPECT_EQ(done.load(), 201);
}

TEST(ThreadPoolTest, AvailableCpusIsPositive) {
  const int n = ThreadPool::AvailableCpus();
  EXPECT_GE(n, 1);
  EXPECT_LE(n, 4096);
}

TEST(ThreadPoolTest, CpuShareDividesAmongTorchrunsLocalProcesses) {
  const int cpus = ThreadPool::AvailableCpus();
  const bool pinned = cpus < sysconf(_SC_NPROCESSORS_ONLN);  // then the share is the affinity
  const char* saved = std::getenv("LOCAL_WORLD_SIZE");
  const std::string keep = saved ? saved : "";
  unsetenv("LOCAL_WORLD_SIZE");
  EXPECT_EQ(ThreadPool::CpuShare(), cpus);
  setenv("LOCAL_WORLD_SIZE", "2", 1);
  EXPECT_EQ(ThreadPool::CpuShare(), pinned ? cpus : std::max(1, cpus / 2));
  setenv("LOCAL_WORLD_SIZE", "100000", 1);
  EXPECT_EQ(ThreadPool::CpuShare(), pinned ? cpus : 1);
  for (const char* junk : {"", "x", "2x", "0", "-3", "1"}) {
    setenv("LOCAL_WORLD_SIZE", junk, 1);
    EXPECT_EQ(ThreadPool::CpuShare(), cpus) << "'" << junk << "'";
  }
  if (saved) setenv("LOCAL_WORLD_SIZE", keep.c_str(), 1); else unsetenv("LOCAL_WORLD_SIZE");
}

}  // namespace
}  // namespace sluice
