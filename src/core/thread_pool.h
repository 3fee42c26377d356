// ThreadPool: a fixed set of worker threads running tasks in submission (FIFO) order.
//
// Each task receives the index of the worker running it (0..size()-1), so callers can keep
// per-worker scratch memory without locks. SetActive(n) lets only workers 0..n-1 take tasks (a
// tuner's way to use fewer threads without stopping any); a task already running finishes.
//
// Thread-safety: Submit() may be called from any thread, including from inside a task, until the
// destructor starts. The destructor finishes every queued task before it returns; it must not run
// on one of the pool's own threads.
#ifndef SLUICE_CORE_THREAD_POOL_H_
#define SLUICE_CORE_THREAD_POOL_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "sluice/status.h"

namespace sluice {

class ThreadPool {
 public:
  using Task = std::function<void(int worker)>;

  // Starts `num_threads` workers; ResourceExhausted when the system cannot start them all (a
  // thread limit, no memory for their stacks). `name` shows in debuggers (truncated to 15 chars).
  // REQUIRES: num_threads >= 1.
  static Result<std::unique_ptr<ThreadPool>> Create(int num_threads, std::string name);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()); }
  void Submit(Task task);
  // Workers 0..n-1 take tasks from now on, the others wait; n is clamped to [1, size()].
  void SetActive(int n);
  int active() const;
  // Whether the calling thread is one of this pool's workers.
  bool OnWorkerThread() const;
  // Keeps every worker on `cpus` from now on (core/cpu_set.h); false when the system refused
  // one. REQUIRES: cpus not empty.
  bool PinTo(const std::vector<int>& cpus);

  // Number of CPUs this process may run on (sched affinity), at least 1.
  static int AvailableCpus();
  // This process's share of them, what loaders size their thread pools by: AvailableCpus()
  // divided among the LOCAL_WORLD_SIZE processes torchrun starts on one machine, unless this
  // process is already pinned to fewer CPUs than the machine has (then it is its own share).
  static int CpuShare();

 private:
  ThreadPool() = default;
  void WorkerLoop(int index);
  void Stop();  // drains the queue and joins the workers started so far

  mutable std::mutex mu_;
  std::condition_variable cv_;       // active workers wait here for tasks
  std::condition_variable idle_cv_;  // workers at or above active_ wait here
  std::deque<Task> queue_;
  int active_ = 0;                   // set to size() by Create
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace sluice

#endif  // SLUICE_CORE_THREAD_POOL_H_
