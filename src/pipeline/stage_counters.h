// Per-stage time and volume counters shared by a loader's threads (relaxed atomics).
#ifndef SLUICE_PIPELINE_STAGE_COUNTERS_H_
#define SLUICE_PIPELINE_STAGE_COUNTERS_H_

#include <atomic>
#include <cstdint>

namespace sluice {

struct StageCounters {
  std::atomic<int64_t> read_ns{0};
  std::atomic<int64_t> decode_ns{0};
  std::atomic<int64_t> transform_ns{0};
  std::atomic<int64_t> collate_ns{0};
  std::atomic<int64_t> wait_ns{0};
  std::atomic<int64_t> bytes_read{0};

  void Reset() {
    for (auto* c : {&read_ns, &decode_ns, &transform_ns, &collate_ns, &wait_ns, &bytes_read})
      c->store(0, std::memory_order_relaxed);
  }
};

}  // namespace sluice

#endif  // SLUICE_PIPELINE_STAGE_COUNTERS_H_
