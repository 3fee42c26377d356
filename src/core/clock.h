// Monotonic time in nanoseconds, and a scope timer that adds into a counter.
#ifndef SLUICE_CORE_CLOCK_H_
#define SLUICE_CORE_CLOCK_H_

#include <atomic>
#include <chrono>
#include <cstdint>

namespace sluice {

inline int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Adds the lifetime of the object to `*sink` (relaxed: these are statistics).
class ScopedTimer {
 public:
  explicit ScopedTimer(std::atomic<int64_t>* sink) : sink_(sink), start_(NowNs()) {}
  ~ScopedTimer() { sink_->fetch_add(NowNs() - start_, std::memory_order_relaxed); }
  ScopedTimer(const ScopedTimer&) = delete;
  ScopedTimer& operator=(const ScopedTimer&) = delete;

 private:
  std::atomic<int64_t>* sink_;
  int64_t start_;
};

}  // namespace sluice

#endif  // SLUICE_CORE_CLOCK_H_
