#include "pipeline/gpu/route_assignment.h"

#include <algorithm>
#include <vector>

#include "codec/nvjpeg_decoders.h"
#include "pipeline/sample_processor.h"

namespace sluice {

namespace {

// libjpeg-turbo's cost for sample s, in seconds of one core (priors, for ordering only): the
// entropy-coded bytes up to the region's last row (it stops there, and Huffman-decodes every row
// above the region), then the region's pixels at the DCT scale.
double CpuDecodeCost(const GpuSample& s, bool dct_scaling) {
  constexpr double kHuffmanBytesPerSecond = 100e6, kPixelsPerSecond = 150e6;
  const Rect r = ReadRegion(s.geo.segments[0]);
  const double rows = static_cast<double>(std::min(r.y + r.h, s.info.height)) / std::max(1, s.info.height);
  const int denom = dct_scaling ? ChooseScaleDenom(s.geo.segments[0], MaxScaleDenom(s.info.format)) : 1;
  const double pixels = static_cast<double>(r.w) * r.h / (denom * denom);
  return static_cast<double>(s.bytes.size) * rows / kHuffmanBytesPerSecond + pixels / kPixelsPerSecond;
}

}  // namespace

void AssignRoutes(GpuBatch* b, DecodeRoute policy, int engine_max_side, bool has_hybrid, bool dct_scaling,
                  RouteScheduler* scheduler) {
  std::vector<size_t> ok, hw_eligible;
  for (size_t i = 0; i < b->gpu.size(); ++i) {
    if (!b->status[i].ok()) continue;
    GpuSample& s = b->gpu[i];
    ok.push_back(i);
    // One resampling pass, no rotation, and a bitstream that looks whole.
    const bool simple = s.geo.num_segments == 1 && s.info.orientation == 1 && s.intact;
    const bool hw = engine_max_side > 0 && simple && EnginesTake(s.info, engine_max_side);
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
  // The engines take the samples costliest for libjpeg-turbo; the CPU side gets the cheapest.
  std::vector<double> cost(b->gpu.size());
  for (size_t i : hw_eligible) cost[i] = CpuDecodeCost(b->gpu[i], dct_scaling);
  std::stable_sort(hw_eligible.begin(), hw_eligible.end(), [&](size_t x, size_t y) { return cost[x] > cost[y]; });
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
