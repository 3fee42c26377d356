#include "pipeline/route_scheduler.h"

#include <algorithm>
#include <cmath>

namespace sluice {

namespace {
constexpr double kAlpha = 0.25;     // weight of a new measurement
constexpr int kExploreEvery = 8;    // batches
constexpr int kExploreSamples = 4;
}  // namespace

const char* RouteName(Route r) {
  switch (r) {
    case Route::kHardware: return "hardware";
    case Route::kHybrid: return "hybrid";
    case Route::kCpu: return "cpu";
  }
  return "?";
}

RouteScheduler::RouteScheduler(int threads, bool has_hardware, bool has_hybrid)
    : threads_(std::max(1, threads)), has_hw_(has_hardware), has_hybrid_(has_hybrid) {}

RouteScheduler::Split RouteScheduler::Plan(int n, int eligible) {
  std::lock_guard<std::mutex> lock(mu_);
  Split s;
  const Route cheaper = has_hybrid_ && cost_[static_cast<int>(Route::kHybrid)] < cost_[static_cast<int>(Route::kCpu)]
                            ? Route::kHybrid : Route::kCpu;
  s.cpu_side = cheaper;
  if (has_hybrid_ && batches_ % kExploreEvery == kExploreEvery - 1) s.explore = kExploreSamples;
  ++batches_;
  if (!has_hw_ || eligible == 0) return s;
  const double per_cpu_sample = cost_[static_cast<int>(cheaper)] / threads_;  // wall s per sample
  const double per_hw_sample = 1.0 / hw_rate_;
  const double h = n * per_cpu_sample / (per_hw_sample + per_cpu_sample);
  s.hardware = std::clamp(static_cast<int>(std::lround(h)), 0, eligible);
  return s;
}

void RouteScheduler::RecordHardware(int samples, double seconds) {
  if (samples <= 0 || seconds <= 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  hw_rate_ = (1 - kAlpha) * hw_rate_ + kAlpha * (samples / seconds);
}

void RouteScheduler::RecordCpuSide(Route route, int samples, double seconds) {
  if (samples <= 0 || seconds <= 0 || route == Route::kHardware) return;
  std::lock_guard<std::mutex> lock(mu_);
  double& c = cost_[static_cast<int>(route)];
  c = (1 - kAlpha) * c + kAlpha * (seconds / samples);
}

double RouteScheduler::hardware_rate() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hw_rate_;
}

double RouteScheduler::cpu_cost(Route route) const {
  std::lock_guard<std::mutex> lock(mu_);
  return cost_[static_cast<int>(route)];
}

}  // namespace sluice
