#include "pipeline/gpu/route_scheduler.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>

#include "core/env_knob.h"
#include "pipeline/batch_trace.h"

namespace sluice {

namespace {
constexpr double kAlpha = 0.25;     // weight of a new cost measurement
constexpr int kExploreEvery = 8;    // batches
constexpr int kExploreSamples = 4;
}  // namespace

const char* RouteScheduler::PhaseName(Phase p) {
  switch (p) {
    case Phase::kHold:
      return "hold";
    case Phase::kProbe:
      return "probe";
    case Phase::kCheck:
      return "check";
  }
  return "?";
}

RouteScheduler::RouteScheduler(bool has_hardware, bool has_hybrid, int cpu_threads, int batch_size)
    : has_hw_(has_hardware), has_hybrid_(has_hybrid), cpu_threads_(std::max(1, cpu_threads)),
      small_batch_(batch_size < kSmallBatch),
      share_(has_hardware ? 0.0 : 1.0), base_share_(share_),
      window_seconds_(EnvKnob("SLUICE_ROUTE_WINDOW_MS", kWindowSeconds * 1e3) * 1e-3) {
  // With the engines, the start is the balanced share by the prior costs (what was measured
  // best on the H100/H200 machines: docs/benchmarks.md), held while the costs are measured;
  // small batches start with the engines alone (see the header).
  if (has_hw_) {
    share_ = base_share_ = small_batch_ ? 0.0 : BalancedShare(kEngineCostPrior);
    hold_ = kBalancedHoldWindows;
  }
  // Probes (bench/gpu_probe.py) set the start, or pin the share and the CPU side's decoder, to
  // compare splits.
  static const double start = EnvKnob("SLUICE_ROUTE_START", -1);
  if (has_hw_ && start >= 0 && start <= 1) share_ = base_share_ = start;
  static const double pinned = EnvKnob("SLUICE_ROUTE_SHARE", -1);
  static const double side = EnvKnob("SLUICE_CPU_SIDE", 0);  // 1: libjpeg-turbo, 2: hybrid
  if (has_hw_ && pinned >= 0 && pinned <= 1) {
    share_ = base_share_ = pinned;
    pinned_ = true;
  }
  if (side == 1 || (side == 2 && has_hybrid_)) side_ = side == 1 ? DecodeRoute::kCpu : DecodeRoute::kHybrid;
}

RouteScheduler::Split RouteScheduler::Plan(int n, int eligible) {
  std::lock_guard<std::mutex> lock(mu_);
  Split s;
  s.generation = generation_;
  const bool hybrid_cheaper =
      has_hybrid_ && cost_[RouteIndex(DecodeRoute::kHybrid)] < cost_[RouteIndex(DecodeRoute::kCpu)];
  // Beside the engines, libjpeg-turbo: the hybrid decoder's GPU stages and CUDA calls slow the
  // engines more than its thread time shows (docs/benchmarks.md, issue 16).
  const bool choose = side_ == DecodeRoute::kAuto && !has_hw_;
  s.cpu_side = side_ != DecodeRoute::kAuto ? side_
               : has_hw_                   ? DecodeRoute::kCpu
               : hybrid_cheaper            ? DecodeRoute::kHybrid
                                           : DecodeRoute::kCpu;
  if (has_hybrid_ && choose && batches_ % kExploreEvery == kExploreEvery - 1) s.explore = kExploreSamples;
  ++batches_;
  if (!has_hw_ || eligible == 0) return s;
  // The CPU side takes share_ of the batch; ineligible samples count towards it. The engines'
  // part comes in grains, and what the rounding gave too many or too few is owed by the next
  // batches: a grain of 16 is a quarter of a batch of 64, which would leave such batches only
  // the shares 0, 1/4, 1/2, ... whatever share_ is.
  const double cpu_target = share_ * n + owed_;
  const int grain = n >= 4 * kHardwareGrain ? kHardwareGrain : n >= 16 ? kHardwareGrain / 2 : 1;
  int hardware = static_cast<int>(std::lround((n - cpu_target) / grain)) * grain;
  if (eligible < hardware) hardware = eligible / grain * grain;
  s.hardware = std::clamp(hardware, 0, eligible);
  owed_ = std::clamp(cpu_target - (n - s.hardware), -static_cast<double>(grain), static_cast<double>(grain));
  return s;
}

// A window adds up the gaps between launches of the current generation, each with the samples of
// the launch that ends it; a gap that spans an interruption (or the first launch after the
// settling ones) only marks where the next gap starts.
void RouteScheduler::RecordLaunch(int64_t generation, int samples, int64_t now_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!has_hw_ || generation != generation_) return;
  if (settle_ > 0) {
    --settle_;
    return;
  }
  const int64_t last = last_launch_ns_;
  last_launch_ns_ = now_ns;
  if (last < 0) return;
  window_ns_ += now_ns - last;
  window_samples_ += samples;
  const double seconds = static_cast<double>(window_ns_) * 1e-9;
  if (++window_launches_ < kWindow || seconds < window_seconds_) return;
  const double rate = seconds > 0 ? static_cast<double>(window_samples_) / seconds : 0.0;
  const double busy = seconds > 0 ? std::min(1.0, window_engine_seconds_ / seconds) : 0.0;
  // The engines' time per image in the window; at a share of 0, their time alone.
  const double engine_cost =
      window_engine_samples_ > 0 ? window_engine_seconds_ / static_cast<double>(window_engine_samples_) : 0.0;
  if (share_ == 0 && engine_cost > 0) alone_cost_ = engine_cost;
  window_launches_ = 0;  // the next window, at the same share, starts here
  window_ns_ = 0;
  window_samples_ = 0;
  window_engine_seconds_ = 0;
  window_engine_samples_ = 0;
  if (BatchTrace::Enabled())
    std::fprintf(stderr, "sluice trace: route window: share %.4f, %.0f img/s over %.2f s, engines busy %.0f%% (%s)\n",
                 share_, rate, seconds, busy * 100, PhaseName(phase_));
  if (static_cast<int>(windows_.size()) == kKeptWindows) windows_.pop_front();
  windows_.push_back(RouteWindow{share_, rate, seconds, busy, PhaseName(phase_)});
  WindowDone(rate, busy, engine_cost);
}

void RouteScheduler::Interrupt() {
  std::lock_guard<std::mutex> lock(mu_);
  last_launch_ns_ = -1;
}

void RouteScheduler::SetShare(double share) {
  share_ = share;
  owed_ = 0;
  first_probe_rate_ = 0;
  ++generation_;
  restarts_ = 0;
  RestartWindow();
}

void RouteScheduler::RestartWindow() {
  window_launches_ = 0;
  window_ns_ = 0;
  window_samples_ = 0;
  window_engine_seconds_ = 0;
  window_engine_samples_ = 0;
  last_launch_ns_ = -1;
  settle_ = kSettleLaunches;
}

// A cycle of probes from the held share. After a gain: one more step the same way. Otherwise:
// the balanced share (when it is more than a step away), a step in direction_, one the other way,
// and the engines alone (a share of 0 can beat every small share when CPU decoding slows the
// engines). Steps down only where they can gain (see below), steps up in small batches only
// while the engines were busy (the header). Shares out of [0, 1] are left out.
void RouteScheduler::StartCycle(bool after_gain) {
  num_candidates_ = next_candidate_ = 0;
  const bool up_ok = !small_batch_ || base_busy_ >= kBusyForUp;
  const auto add = [this, up_ok](double share) {
    if (share > base_share_ + 1e-9 && !up_ok) return;
    if (share < -1e-9 || share > 1 + 1e-9) return;
    int& skip = skip_left_[GridIndex(share)];
    if (skip > 0) {  // it lost by far when last tried
      --skip;
      return;
    }
    candidates_[num_candidates_++] = std::clamp(share, 0.0, 1.0);
  };
  if (!after_gain) {
    const double balanced = BalancedShare(engine_cost_);
    if (balanced >= 0 && std::abs(balanced - base_share_) > 1.5 * kShareStep) add(balanced);
  }
  // A step down adds engine work: when the engines were busy through the hold it can gain only
  // if the CPU side slows them (their time per image above their time alone, once measured at 0)
  // or a step down is where the last gain came from. Otherwise it is not tried: its windows read
  // low while the batches of the held share drain, and the change itself costs.
  const bool slowed = alone_cost_ == 0 || base_engine_cost_ > (1 + kSlowedEngines) * alone_cost_;
  const bool down_ok = base_busy_ < kBusyForDown || direction_ < 0 || slowed;
  add(base_share_ + direction_ * kShareStep);  // up, or down where the last gain came from
  if (!after_gain && down_ok) {
    if (alone_cost_ > 0 || base_busy_ < kBusyForDown) add(base_share_ - direction_ * kShareStep);
    if (base_share_ > kShareStep + 1e-9) add(0.0);
  }
  NextProbe();
}

void RouteScheduler::ProbeLost(double rate) {
  const int k = GridIndex(share_);
  if (rate >= base_rate_ * (1 - kFarBelow)) {
    skip_len_[k] = 0;
    return;
  }
  skip_len_[k] = std::clamp(2 * skip_len_[k], 1, kMaxSkips);
  skip_left_[k] = skip_len_[k];
}

int RouteScheduler::GridIndex(double share) {
  return std::clamp(static_cast<int>(std::lround(share / kShareStep)), 0, kGrid - 1);
}

// Both sides finish together when the CPU side's share s satisfies s * cost / threads =
// (1 - s) * engine_cost: s = C / (C + E) with C = threads / cost and E = 1 / engine_cost.
double RouteScheduler::BalancedShare(double engine_cost) const {
  if (!has_hw_ || engine_cost <= 0) return -1;
  const double cost = cost_[RouteIndex(side_ == DecodeRoute::kHybrid ? DecodeRoute::kHybrid : DecodeRoute::kCpu)];
  const double c = cpu_threads_ / cost, e = 1 / engine_cost;
  return std::clamp(std::round(kModelFraction * c / (c + e) / kShareStep) * kShareStep, 0.0, kMaxModelShare);
}

double RouteScheduler::balanced_share() const {
  std::lock_guard<std::mutex> lock(mu_);
  return BalancedShare(engine_cost_);
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
  last_hold_rate_ = 0;
  hold_windows_ = std::min(2 * hold_windows_, kMaxHoldWindows);
  if (share_ != base_share_) SetShare(base_share_);
}

// One window measured at share_.
void RouteScheduler::WindowDone(double rate, double busy, double engine_cost) {
  if (pinned_) return;
  switch (phase_) {
    case Phase::kHold: {
      const double before = last_hold_rate_, busy_before = last_hold_busy_, cost_before = last_hold_cost_;
      last_hold_rate_ = rate;
      last_hold_busy_ = busy;
      last_hold_cost_ = engine_cost;
      if (--hold_ > 0) return;
      base_rate_ = before > 0 ? (before + rate) / 2 : rate;  // two windows: half the noise
      base_busy_ = before > 0 ? (busy_before + busy) / 2 : busy;
      base_engine_cost_ = before > 0 ? (cost_before + engine_cost) / 2 : engine_cost;
      last_hold_rate_ = 0;
      StartCycle(false);
      return;
    }
    case Phase::kProbe:
      if (first_probe_rate_ == 0) {
        if (rate <= base_rate_ * (1 + kMargin)) {
          ProbeLost(rate);
          return NextProbe();
        }
        first_probe_rate_ = rate;  // a gain in one window: once more at this share
        return;
      }
      rate = (rate + first_probe_rate_) / 2;
      first_probe_rate_ = 0;
      if (rate <= base_rate_ * (1 + kMargin)) return NextProbe();
      // Faster than the held share's windows before it; on a machine whose rates rise (warming
      // up) any later window is. So one window back at the held share decides.
      probe_share_ = share_;
      probe_rate_ = rate;
      phase_ = Phase::kCheck;
      SetShare(base_share_);
      return;
    case Phase::kCheck: {
      const double around = (base_rate_ + rate) / 2;  // the held share before and after the probe
      if (probe_rate_ <= around * (1 + kMargin)) {
        base_rate_ = around;
        return NextProbe();
      }
      direction_ = probe_share_ > base_share_ ? 1 : -1;
      std::fill(std::begin(skip_left_), std::end(skip_left_), 0);  // a new held share: every probe again
      std::fill(std::begin(skip_len_), std::end(skip_len_), 0);
      base_share_ = probe_share_;
      base_rate_ = probe_rate_;
      hold_windows_ = kHoldWindows;
      StartCycle(true);
      return;
    }
  }
}

void RouteScheduler::RecordCpuSide(DecodeRoute route, int samples, double seconds) {
  if (samples <= 0 || seconds <= 0 || route == DecodeRoute::kHardware) return;
  std::lock_guard<std::mutex> lock(mu_);
  double& c = cost_[RouteIndex(route)];
  c = (1 - kAlpha) * c + kAlpha * (seconds / samples);
}

void RouteScheduler::RecordEngines(int samples, double seconds, bool initialized) {
  if (samples <= 0 || seconds <= 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  // A one-time cost, neither the share's nor per image; a few per share (new call sizes): more
  // are calls the engines rejected, which any share may meet.
  if (initialized && restarts_ < kMaxRestarts) {
    ++restarts_;
    return RestartWindow();
  }
  const double per_image = seconds / samples;
  if (last_launch_ns_ >= 0) {
    window_engine_seconds_ += seconds;
    window_engine_samples_ += samples;
  }
  engine_cost_ = engine_cost_ == 0 ? per_image : (1 - kAlpha) * engine_cost_ + kAlpha * per_image;
}

std::vector<RouteWindow> RouteScheduler::windows() const {
  std::lock_guard<std::mutex> lock(mu_);
  return std::vector<RouteWindow>(windows_.begin(), windows_.end());
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
