// Per-stage time and volume counters shared by a loader's threads (relaxed atomics): the
// Reader adds its reads, the executors their decoding, transforms and waits. StageTimer times a
// stage into them and marks it for profilers (an NVTX range "sluice read", "sluice decode", ...).
//
// Thread-safety: every counter may be updated from any thread.
#ifndef SLUICE_CORE_STAGE_COUNTERS_H_
#define SLUICE_CORE_STAGE_COUNTERS_H_

#include <atomic>
#include <cstdint>

#include "core/clock.h"
#include "core/nvtx.h"
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
  std::atomic<int64_t> video_pictures{0};  // pictures the video decoders put out

  std::atomic<int64_t> samples{0};  // delivered in batches
  std::atomic<int64_t> batches{0};
  std::atomic<int64_t> start_ns{NowNs()};

  void Reset() {
    for (auto* c : {&read_ns, &decode_ns, &transform_ns, &collate_ns, &read_cpu_ns, &decode_cpu_ns, &transform_cpu_ns,
                    &collate_cpu_ns, &wait_ns, &bytes_read, &video_pictures, &samples, &batches})
      c->store(0, std::memory_order_relaxed);
    start_ns.store(NowNs());
  }

  // The counters' part of LoaderStats: samples, batches, bytes, stage and wall seconds.
  void Fill(LoaderStats* s) const {
    auto sec = [](const std::atomic<int64_t>& ns) { return static_cast<double>(ns.load()) * 1e-9; };
    s->samples = samples.load();
    s->batches = batches.load();
    s->bytes_read = bytes_read.load();
    s->video_frames_decoded = video_pictures.load();
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

enum class Stage { kRead, kDecode, kTransform, kCollate };

// Adds the wall and CPU time of its scope to `stage`'s counters; an NVTX range of the same name
// covers it.
//   { StageTimer t(&counters, Stage::kDecode); ... }
class StageTimer {
 public:
  StageTimer(StageCounters* c, Stage stage)
      : range_(kNames[static_cast<int>(stage)]), timer_(Wall(c, stage), Cpu(c, stage)) {}

 private:
  static constexpr const char* kNames[] = {"sluice read", "sluice decode", "sluice transform", "sluice collate"};
  static std::atomic<int64_t>* Wall(StageCounters* c, Stage s) {
    std::atomic<int64_t>* const wall[] = {&c->read_ns, &c->decode_ns, &c->transform_ns, &c->collate_ns};
    return wall[static_cast<int>(s)];
  }
  static std::atomic<int64_t>* Cpu(StageCounters* c, Stage s) {
    std::atomic<int64_t>* const cpu[] = {&c->read_cpu_ns, &c->decode_cpu_ns, &c->transform_cpu_ns, &c->collate_cpu_ns};
    return cpu[static_cast<int>(s)];
  }
  NvtxRange range_;    // pushed before the timer starts, popped after it stops
  ScopedTimer timer_;
};

}  // namespace sluice

#endif  // SLUICE_CORE_STAGE_COUNTERS_H_
