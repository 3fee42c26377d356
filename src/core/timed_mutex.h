// TimedMutex: a mutex whose lock can wait with a time limit, built on std::mutex and a condition
// variable. std::timed_mutex does the same, but libstdc++ implements its timed wait with
// pthread_mutex_clocklock, which ThreadSanitizer (GCC 12) does not see: every unlock after a timed
// lock is reported, and the lock orders nothing. Meets Lockable and TimedLockable (for lock_guard
// and unique_lock); not recursive.
//
// Thread-safety: all methods may be called from any thread.
#ifndef SLUICE_CORE_TIMED_MUTEX_H_
#define SLUICE_CORE_TIMED_MUTEX_H_

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace sluice {

class TimedMutex {
 public:
  void lock() {
    std::unique_lock<std::mutex> lock(mu_);
    free_.wait(lock, [&] { return !held_; });
    held_ = true;
  }
  bool try_lock() {
    std::lock_guard<std::mutex> lock(mu_);
    if (held_) return false;
    held_ = true;
    return true;
  }
  template <class Rep, class Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& wait) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!free_.wait_for(lock, wait, [&] { return !held_; })) return false;
    held_ = true;
    return true;
  }
  // REQUIRES: held (by this thread). Notifies under the lock: a thread that takes the mutex next
  // may destroy it as soon as it can (the owner of a loader closing it).
  void unlock() {
    std::lock_guard<std::mutex> lock(mu_);
    held_ = false;
    free_.notify_one();
  }

 private:
  std::mutex mu_;
  std::condition_variable free_;
  bool held_ = false;  // guarded by mu_
};

}  // namespace sluice

#endif  // SLUICE_CORE_TIMED_MUTEX_H_
