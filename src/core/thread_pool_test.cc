#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
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
    auto created = ThreadPool::Create(3, "test");
    ASSERT_TRUE(created.ok());
    ThreadPool& pool = **created;
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
    auto created = ThreadPool::Create(1, "fifo");
    ASSERT_TRUE(created.ok());
    ThreadPool& pool = **created;
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
    auto created = ThreadPool::Create(2, "pair");
    ASSERT_TRUE(created.ok());
    ThreadPool& pool = **created;
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
    auto created = ThreadPool::Create(2, "tree");
    ASSERT_TRUE(created.ok());
    ThreadPool& pool = **created;
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
    auto created = ThreadPool::Create(1, "drain");
    ASSERT_TRUE(created.ok());
    ThreadPool& pool = **created;
    pool.Submit([&](int) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      done.fetch_add(1);
    });
    for (int i = 0; i < 200; ++i) pool.Submit([&](int) { done.fetch_add(1); });
    // The first task is still sleeping: nearly everything is queued when the destructor runs.
  }
  EXPECT_EQ(done.load(), 201);
}

TEST(ThreadPoolTest, KnowsItsOwnThreads) {
  auto pool = ThreadPool::Create(2, "own");
  ASSERT_TRUE(pool.ok());
  EXPECT_FALSE((*pool)->OnWorkerThread());
  std::atomic<int> inside{0};
  for (int i = 0; i < 4; ++i) (*pool)->Submit([&, p = pool->get()](int) { inside += p->OnWorkerThread(); });
  pool->reset();
  EXPECT_EQ(inside.load(), 4);
}

// A task on pool A submits to pool B; B is destroyed as soon as that task has run. Submit must be
// finished with B (its condition variable included) by then: under ASan, a notification after the
// unlock showed up as a use-after-free of B's condition variable.
TEST(ThreadPoolTest, SubmitterIsDoneWithAPoolItsTaskOutlives) {
  auto a = ThreadPool::Create(1, "a");
  ASSERT_TRUE(a.ok());
  for (int round = 0; round < 3000; ++round) {
    auto b = ThreadPool::Create(1, "b");
    ASSERT_TRUE(b.ok());
    std::atomic<bool> ran{false};
    ThreadPool* target = b->get();
    (*a)->Submit([target, &ran](int) { target->Submit([&ran](int) { ran.store(true); }); });
    while (!ran.load()) std::this_thread::yield();
    b->reset();  // the submitter may still be inside Submit
  }
}

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
// In a child process: 400 threads in an address space with room for a few of their stacks.
[[noreturn]] void StartTooManyThreads() {
  long pages = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld", &pages) != 1) pages = 0;
    std::fclose(f);
  }
  const rlim_t limit = static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) + (64 << 20);
  const rlimit rl{limit, limit};
  setrlimit(RLIMIT_AS, &rl);
  auto pool = ThreadPool::Create(400, "many");
  std::fprintf(stderr, "%s\n", pool.ok() ? "started" : pool.status().ToString().c_str());
  std::exit(!pool.ok() && pool.status().code() == StatusCode::kResourceExhausted ? 0 : 1);
}

// Only workers below the active count take tasks; every task still runs once, across changes.
TEST(ThreadPoolTest, SetActiveLimitsTheWorkersThatTakeTasks) {
  auto created = ThreadPool::Create(4, "test");
  ASSERT_TRUE(created.ok());
  ThreadPool& pool = **created;
  std::atomic<int> done{0}, max_index{-1}, running{0}, max_running{0};
  auto run = [&](int n) {
    for (int i = 0; i < n; ++i)
      pool.Submit([&](int w) {
        const int now = ++running;
        for (int m = max_running.load(); now > m && !max_running.compare_exchange_weak(m, now);) {
        }
        for (int m = max_index.load(); w > m && !max_index.compare_exchange_weak(m, w);) {
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        --running;
        ++done;
      });
  };
  auto wait_for = [&](int n) {
    for (int i = 0; i < 5000 && done.load() < n; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  pool.SetActive(2);
  EXPECT_EQ(pool.active(), 2);
  run(200);
  wait_for(200);
  EXPECT_EQ(done.load(), 200);
  EXPECT_LE(max_index.load(), 1);
  EXPECT_LE(max_running.load(), 2);
  pool.SetActive(1);
  max_index = -1, max_running = 0;
  run(50);
  wait_for(250);
  EXPECT_EQ(done.load(), 250);
  EXPECT_EQ(max_index.load(), 0);
  EXPECT_EQ(max_running.load(), 1);
  pool.SetActive(99);  // clamped to the pool's size
  EXPECT_EQ(pool.active(), 4);
  max_index = -1;
  run(400);
  wait_for(650);
  EXPECT_EQ(done.load(), 650);
  EXPECT_EQ(max_index.load(), 3);
  pool.SetActive(0);
  EXPECT_EQ(pool.active(), 1);
}

// Threads that cannot start are an error the caller gets, not std::terminate.
TEST(ThreadPoolTest, CreateReportsThreadsThatCannotStart) {
  EXPECT_EXIT(StartTooManyThreads(), ::testing::ExitedWithCode(0),
              "ResourceExhausted: cannot start thread [0-9]+ of 400 \\(many\\)");
}
#endif

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
