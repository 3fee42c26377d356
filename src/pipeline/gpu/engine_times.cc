#include "pipeline/gpu/engine_times.h"

namespace sluice {

void EngineTimes::Reset(const GpuDecoders& decoders) {
  busy_base_ns_.store(decoders.engine_busy_ns());
  turn_wait_base_ns_.store(decoders.engine_turn_wait_ns());
  times_.memory_wait_ns.store(0);
  times_.pack_ns.store(0);
}

void EngineTimes::Fill(const GpuDecoders& decoders, LoaderStats* s) const {
  auto seconds = [](int64_t ns) { return static_cast<double>(ns) * 1e-9; };
  s->engine_busy_s = seconds(decoders.engine_busy_ns() - busy_base_ns_.load());
  s->engine_turn_wait_s = seconds(decoders.engine_turn_wait_ns() - turn_wait_base_ns_.load());
  s->engine_memory_wait_s = seconds(times_.memory_wait_ns.load());
  s->engine_pack_s = seconds(times_.pack_ns.load());
}

}  // namespace sluice
