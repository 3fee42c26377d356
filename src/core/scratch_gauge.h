// ScratchGauge: the bytes of the per-thread scratch memory a loader's threads keep (decoded
// pixels, intermediate images), in use now and at the peak, as each thread reports its own after
// a sample. A loader adds them to its pooled memory in stats().
//
// Thread-safety: Report(w, ...) from worker w only; the readings from any thread.
#ifndef SLUICE_CORE_SCRATCH_GAUGE_H_
#define SLUICE_CORE_SCRATCH_GAUGE_H_

#include <atomic>
#include <cstdint>
#include <vector>

namespace sluice {

class ScratchGauge {
 public:
  explicit ScratchGauge(int workers) : bytes_(static_cast<size_t>(workers)) {}

  void Report(int worker, int64_t bytes) {
    const int64_t before = bytes_[static_cast<size_t>(worker)].exchange(bytes, std::memory_order_relaxed);
    const int64_t now = in_use_.fetch_add(bytes - before, std::memory_order_relaxed) + bytes - before;
    int64_t peak = peak_.load(std::memory_order_relaxed);
    while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
  }
  int64_t in_use() const { return in_use_.load(std::memory_order_relaxed); }
  int64_t peak() const { return peak_.load(std::memory_order_relaxed); }

 private:
  std::vector<std::atomic<int64_t>> bytes_;
  std::atomic<int64_t> in_use_{0}, peak_{0};
};

}  // namespace sluice

#endif  // SLUICE_CORE_SCRATCH_GAUGE_H_
