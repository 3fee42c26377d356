#include "pipeline/gpu/route_scheduler.h"

#include <algorithm>
#include <cmath>

namespace sluice {

namespace {
constexpr double kAlpha = 0.25;     // weight of a new cost measurement
constexpr int kExploreEvery = 8;    // batches
constexpr int kExploreSamples = 4;
}  // namespace

RouteScheduler::RouteScheduler(bool has_hardware, bool has_hybrid)
    : has_hw_(has_hardware), has_hybrid_(has_hybrid), share_(has_hardware ? 0.0 : 1.0), base_share_(share_) {}

RouteScheduler::Split RouteScheduler::Plan(int n, int eligible) {
  std::lock_guard<std::mutex> lock(mu_);
  Split s;
  s.generation = generation_;
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

void RouteScheduler::RecordLaunch(int64_t generation, int samples, int64_t now_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!has_hw_ || generation != generation_) return;
  if (window_launches_ == 0) {  // the window starts at its first launch
    window_launches_ = 1;
    window_start_ns_ = now_ns;
    window_samples_ = 0;
    return;
  }
  window_samples_ += samples;
  if (++window_launches_ <= kWindow) return;
  const double seconds = static_cast<double>(now_ns - window_start_ns_) * 1e-9;
  const double rate = seconds > 0 ? static_cast<double>(window_samples_) / seconds : 0.0;
  window_launches_ = 1;  // the next window, at the same share, starts here
  window_start_ns_ = now_ns;
  window_samples_ = 0;
  WindowDone(rate);
}

void RouteScheduler::Interrupt() {
  std::lock_guard<std::mutex> lock(mu_);
  window_launches_ = 0;
}

void RouteScheduler::SetShare(double share) {
  share_ = share;
  ++generation_;
  window_launches_ = 0;
}

// A cycle of probes from the held share. After a gain: one more step the same way. Otherwise:
// a step in direction_, one the other way, and the engines alone (a share of 0 can beat every
// small share when CPU decoding slows the engines). Shares out of [0, 1] are left out.
void RouteScheduler::StartCycle(bool after_gain) {
  num_candidates_ = next_candidate_ = 0;
  const auto add = [this](double share) {
    if (share > -1e-9 && share < 1 + 1e-9) candidates_[num_candidates_++] = std::clamp(share, 0.0, 1.0);
  };
  add(base_share_ + direction_ * kShareStep);
  if (!after_gain) {
    add(base_share_ - direction_ * kShareStep);
    if (base_share_ > kShareStep + 1e-9) add(0.0);
  }
  NextProbe();
}

void RouteScheduler::NextProbe() {
  if (next_candidate_ == num_candidates_) return Hold();
  phase_ = Phase::kProbe;
  SetShare(candidates_[next_candidate_++]);
}

// Back to the held share; each hold is twice as long as the last, up to kMaxHoldWindows, until
// a probe gains (then the next is kHoldWindows again).
void RouteScheduler::Hold() {
  phase_ = Phase::kHold;
  hold_ = hold_windows_;
  hold_windows_ = std::min(2 * hold_windows_, kMaxHoldWindows);
  if (share_ != base_share_) SetShare(base_share_);
}

// One window measured at share_.
void RouteScheduler::WindowDone(double rate) {
  switch (phase_) {
    case Phase::kHold:
      if (--hold_ > 0) return;
      base_rate_ = rate;
      StartCycle(false);
      return;
    case Phase::kProbe:
      if (rate > base_rate_ * (1 + kMargin)) {
        direction_ = share_ > base_share_ ? 1 : -1;
        base_share_ = share_;
        base_rate_ = rate;
        hold_windows_ = kHoldWindows;
        StartCycle(true);
      } else {
        NextProbe();
      }
      return;
  }
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
