#include "pipeline/gpu/route_scheduler.h"

#include <algorithm>
#include <cmath>

namespace sluice {

namespace {
constexpr double kAlpha = 0.25;     // weight of a new cost measurement
constexpr double kStep = 0.02;      // share moved per batch
constexpr double kSlack = 0.05;     // finish times this close count as together
constexpr int kExploreEvery = 8;    // batches
constexpr int kExploreSamples = 4;
// Starting point: the engines at ~12,000 images/s against 2.5 ms per image per thread.
constexpr double kHardwareRate = 12000.0;
}  // namespace

RouteScheduler::RouteScheduler(int threads, bool has_hardware, bool has_hybrid)
    : has_hw_(has_hardware), has_hybrid_(has_hybrid) {
  const double cpu_rate = std::max(1, threads) / cost_[RouteIndex(DecodeRoute::kCpu)];
  share_ = has_hw_ ? cpu_rate / (cpu_rate + kHardwareRate) : 1.0;
}

RouteScheduler::Split RouteScheduler::Plan(int n, int eligible) {
  std::lock_guard<std::mutex> lock(mu_);
  Split s;
  const bool hybrid_cheaper =
      has_hybrid_ && cost_[RouteIndex(DecodeRoute::kHybrid)] < cost_[RouteIndex(DecodeRoute::kCpu)];
  s.cpu_side = hybrid_cheaper ? DecodeRoute::kHybrid : DecodeRoute::kCpu;
  if (has_hybrid_ && batches_ % kExploreEvery == kExploreEvery - 1) s.explore = kExploreSamples;
  ++batches_;
  if (!has_hw_ || eligible == 0) return s;
  // The CPU side takes share_ of the batch; ineligible samples count towards it.
  const int cpu_target = static_cast<int>(std::lround(share_ * n));
  int hardware = n - cpu_target;
  const int grain = n >= 4 * kHardwareGrain ? kHardwareGrain : n >= 16 ? kHardwareGrain / 2 : 1;
  hardware = static_cast<int>(std::lround(static_cast<double>(hardware) / grain)) * grain;
  if (eligible < hardware) hardware = eligible / grain * grain;
  s.hardware = std::clamp(hardware, 0, eligible);
  return s;
}

void RouteScheduler::RecordBatch(double hardware_seconds, double cpu_side_seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!has_hw_) return;
  if (hardware_seconds < 0 && cpu_side_seconds < 0) return;
  if (hardware_seconds < 0) {  // all on the CPU side: give the engines some
    share_ -= kStep;
  } else if (cpu_side_seconds < 0) {
    share_ += kStep;
  } else if (cpu_side_seconds > hardware_seconds * (1 + kSlack)) {
    share_ -= kStep;
  } else if (cpu_side_seconds < hardware_seconds * (1 - kSlack)) {
    share_ += kStep;
  }
  share_ = std::clamp(share_, 0.0, 1.0);
}

void RouteScheduler::RecordCpuSide(DecodeRoute route, int samples, double seconds) {
  if (samples <= 0 || seconds <= 0 || route == DecodeRoute::kHardware) return;
  std::lock_guard<std::mutex> lock(mu_);
  double& c = cost_[RouteIndex(route)];
  c = (1 - kAlpha) * c + kAlpha * (seconds / samples);
}

double RouteScheduler::cpu_share() const {
  std::lock_guard<std::mutex> lock(mu_);
  return share_;
}

double RouteScheduler::cpu_cost(DecodeRoute route) const {
  std::lock_guard<std::mutex> lock(mu_);
  return cost_[RouteIndex(route)];
}

}  // namespace sluice
