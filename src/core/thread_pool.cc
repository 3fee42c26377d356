#include "core/thread_pool.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "sluice/status.h"

namespace sluice {

ThreadPool::ThreadPool(int num_threads, std::string name) {
  SLUICE_CHECK(num_threads >= 1);
  workers_.reserve(static_cast<size_t>(num_threads));
  for (int i = 0; i < num_threads; ++i) {
    workers_.emplace_back([this, i] { WorkerLoop(i); });
    std::string thread_name = (name + std::to_string(i)).substr(0, 15);
    pthread_setname_np(workers_.back().native_handle(), thread_name.c_str());
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::Submit(Task task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(task));
  }
  cv_.notify_one();
}

void ThreadPool::WorkerLoop(int index) {
  for (;;) {
    Task task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stop_ and drained
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task(index);
  }
}

int ThreadPool::AvailableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int>(n) : 1;
}

int ThreadPool::CpuShare() {
  const int cpus = AvailableCpus();
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (online > 0 && cpus < online) return cpus;  // pinned: the share was chosen already
  const char* env = std::getenv("LOCAL_WORLD_SIZE");
  if (env == nullptr) return cpus;
  char* end = nullptr;
  const long local = std::strtol(env, &end, 10);
  if (end == env || *end != '\0' || local < 2) return cpus;
  return std::max(1, static_cast<int>(cpus / local));
}

}  // namespace sluice
