#include "pipeline/gpu/route_assignment.h"

#include <vector>

#include "codec/nvjpeg_decoders.h"

namespace sluice {

void AssignRoutes(GpuBatch* b, DecodeRoute policy, bool has_hardware, bool has_hybrid, RouteScheduler* scheduler) {
  std::vector<size_t> ok, hw_eligible;
  for (size_t i = 0; i < b->gpu.size(); ++i) {
    if (!b->status[i].ok()) continue;
    GpuSample& s = b->gpu[i];
    ok.push_back(i);
    // One resampling pass, no rotation, and a bitstream that looks whole.
    const bool simple = s.geo.num_segments == 1 && s.info.orientation == 1 && s.intact;
    const bool hw = has_hardware && simple && HardwareDecodable(s.info);
    const bool hy = has_hybrid && simple && HybridDecodable(s.info);
    s.route = hy ? DecodeRoute::kHybrid : DecodeRoute::kCpu;
    if (hw) hw_eligible.push_back(i);
    if (policy == DecodeRoute::kHardware && hw) s.route = DecodeRoute::kHardware;
    if (policy == DecodeRoute::kCpu) s.route = DecodeRoute::kCpu;
  }
  if (policy != DecodeRoute::kAuto) return;
  const RouteScheduler::Split split =
      scheduler->Plan(static_cast<int>(ok.size()), static_cast<int>(hw_eligible.size()));
  b->route_generation = split.generation;
  for (int k = 0; k < split.hardware; ++k) b->gpu[hw_eligible[static_cast<size_t>(k)]].route = DecodeRoute::kHardware;
  const DecodeRoute other = split.cpu_side == DecodeRoute::kHybrid ? DecodeRoute::kCpu : DecodeRoute::kHybrid;
  int explore = split.explore;
  for (size_t i : ok) {
    GpuSample& s = b->gpu[i];
    if (s.route != DecodeRoute::kHybrid) continue;  // hybrid-decodable, not on the engines
    s.route = explore-- > 0 ? other : split.cpu_side;
  }
}

}  // namespace sluice
