// Monotonic time and this thread's CPU time in nanoseconds, and a scope timer that adds into
// counters.
#ifndef SLUICE_CORE_CLOCK_H_
#define SLUICE_CORE_CLOCK_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <ctime>

namespace sluice {

inline int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// CPU time the calling thread has used (CLOCK_THREAD_CPUTIME_ID): what it computed, not what it
// waited or was descheduled for.
inline int64_t ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Adds the lifetime of the object to `*sink`, and the thread's CPU time over it to `*cpu_sink`
// when given (relaxed: these are statistics).
class ScopedTimer {
 public:
  explicit ScopedTimer(std::atomic<int64_t>* sink, std::atomic<int64_t>* cpu_sink = nullptr)
      : sink_(sink), cpu_sink_(cpu_sink), start_(NowNs()), cpu_start_(cpu_sink != nullptr ? ThreadCpuNs() : 0) {}
  ~ScopedTimer() {
    sink_->fetch_add(NowNs() - start_, std::memory_order_relaxed);
    if (cpu_sink_ != nullptr) cpu_sink_->fetch_add(ThreadCpuNs() - cpu_start_, std::memory_order_relaxed);
  }
  ScopedTimer(const ScopedTimer&) = delete;
  ScopedTimer& operator=(const ScopedTimer&) = delete;

 private:
  std::atomic<int64_t>* sink_;
  std::atomic<int64_t>* cpu_sink_;
  int64_t start_, cpu_start_;
};

}  // namespace sluice

#endif  // SLUICE_CORE_CLOCK_H_
