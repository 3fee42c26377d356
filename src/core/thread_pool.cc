#include "core/thread_pool.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <system_error>

#include "core/cpu_set.h"
#include "sluice/status.h"

namespace sluice {

ThreadPool::~ThreadPool() { Stop(); }

Result<std::unique_ptr<ThreadPool>> ThreadPool::Create(int num_threads, std::string name) {
  SLUICE_CHECK(num_threads >= 1);
  std::unique_ptr<ThreadPool> pool(new ThreadPool());
  pool->workers_.reserve(static_cast<size_t>(num_threads));
  pool->active_ = num_threads;
  for (int i = 0; i < num_threads; ++i) {
    try {
      pool->workers_.emplace_back([p = pool.get(), i] { p->WorkerLoop(i); });
    } catch (const std::system_error& e) {
      return ResourceExhausted("cannot start thread ", i + 1, " of ", num_threads, " (", name, "): ", e.what(),
                               "; use fewer threads");
    }
    std::string thread_name = (name + std::to_string(i)).substr(0, 15);
    pthread_setname_np(pool->workers_.back().native_handle(), thread_name.c_str());
  }
  return pool;
}

void ThreadPool::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  idle_cv_.notify_all();
  for (auto& t : workers_) t.join();
  workers_.clear();
}

// Notified under the lock: once Submit has the lock, the destructor (which takes it to stop) waits
// until the notification is done, so a submitter on another pool's thread never touches a
// condition variable that was freed.
void ThreadPool::Submit(Task task) {
  std::lock_guard<std::mutex> lock(mu_);
  queue_.push_back(std::move(task));
  cv_.notify_one();
}

void ThreadPool::SetActive(int n) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    active_ = std::clamp(n, 1, static_cast<int>(workers_.size()));
  }
  idle_cv_.notify_all();  // those now active go back to the tasks
  cv_.notify_all();       // those now idle leave them
}

int ThreadPool::active() const {
  std::lock_guard<std::mutex> lock(mu_);
  return active_;
}

bool ThreadPool::OnWorkerThread() const {
  const std::thread::id self = std::this_thread::get_id();
  for (const std::thread& t : workers_)
    if (t.get_id() == self) return true;
  return false;
}

bool ThreadPool::PinTo(const std::vector<int>& cpus) {
  bool all = true;
  for (std::thread& t : workers_) all = PinThread(t.native_handle(), cpus) && all;
  return all;
}

void ThreadPool::WorkerLoop(int index) {
  for (;;) {
    Task task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      for (;;) {
        if (stop_ || (index < active_ && !queue_.empty())) break;
        if (index >= active_) {
          // A wake-up for a task this worker may not take goes on to one that may.
          if (!queue_.empty()) cv_.notify_one();
          idle_cv_.wait(lock, [&] { return stop_ || index < active_; });
        } else {
          cv_.wait(lock);
        }
      }
      if (queue_.empty()) return;  // stop_ and drained
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task(index);
  }
}

int ThreadPool::AvailableCpus() {
  if (const int n = static_cast<int>(ProcessCpus().size()); n > 0) return n;
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
