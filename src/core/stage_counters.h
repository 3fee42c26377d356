// Per-stage time and volume counters shared by a loader's threads (relaxed atomics): the
// Reader adds its reads, the executors their decoding, transforms and waits.
//
// Thread-safety: every counter may be updated from any thread.
#ifndef SLUICE_CORE_STAGE_COUNTERS_H_
#define SLUICE_CORE_STAGE_COUNTERS_H_

#include <atomic>
#include <cstdint>

#include "core/clock.h"
#include "sluice/loader_stats.h"

namespace sluice {

struct StageCounters {
  std::atomic<int64_t> read_ns{0};
  std::atomic<int64_t> decode_ns{0};
  std::atomic<int64_t> transform_ns{0};
  std::atomic<int64_t> collate_ns{0};
  // The same stages' CPU time (the threads' own clocks): below the wall time when the machine is
  // busy with other work and the threads wait for a core.
  std::atomic<int64_t> read_cpu_ns{0};
  std::atomic<int64_t> decode_cpu_ns{0};
  std::atomic<int64_t> transform_cpu_ns{0};
  std::atomic<int64_t> collate_cpu_ns{0};
  std::atomic<int64_t> wait_ns{0};
  std::atomic<int64_t> bytes_read{0};

  std::atomic<int64_t> samples{0};  // delivered in batches
  std::atomic<int64_t> batches{0};
  std::atomic<int64_t> start_ns{NowNs()};

  void Reset() {
    for (auto* c : {&read_ns, &decode_ns, &transform_ns, &collate_ns, &read_cpu_ns, &decode_cpu_ns, &transform_cpu_ns,
                    &collate_cpu_ns, &wait_ns, &bytes_read, &samples, &batches})
      c->store(0, std::memory_order_relaxed);
    start_ns.store(NowNs());
  }

  // The counters' part of LoaderStats: samples, batches, bytes, stage and wall seconds.
  void Fill(LoaderStats* s) const {
    auto sec = [](const std::atomic<int64_t>& ns) { return static_cast<double>(ns.load()) * 1e-9; };
    s->samples = samples.load();
    s->batches = batches.load();
    s->bytes_read = bytes_read.load();
    s->read_s = sec(read_ns);
    s->decode_s = sec(decode_ns);
    s->transform_s = sec(transform_ns);
    s->collate_s = sec(collate_ns);
    s->read_cpu_s = sec(read_cpu_ns);
    s->decode_cpu_s = sec(decode_cpu_ns);
    s->transform_cpu_s = sec(transform_cpu_ns);
    s->collate_cpu_s = sec(collate_cpu_ns);
    s->wait_s = sec(wait_ns);
    s->wall_s = static_cast<double>(NowNs() - start_ns.load()) * 1e-9;
  }
};

}  // namespace sluice

#endif  // SLUICE_CORE_STAGE_COUNTERS_H_
