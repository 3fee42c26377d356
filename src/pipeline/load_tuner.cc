#include "pipeline/load_tuner.h"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace sluice {

namespace {

std::string Percent(double share) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.0f%%", share * 100);
  return text;
}

std::string Threads(int n) { return std::to_string(n) + (n == 1 ? " thread" : " threads"); }

std::string Rate(double rate) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f batches/s", rate);
  return text;
}

}  // namespace

LoadTuner::LoadTuner(Setting start, Scope scope) : all_(start), scope_(scope), now_(start), before_(start) {
  if (!Tunes()) Settle(std::string("nothing to tune: ") + scope_.fixed);
}

LoadTuner::Setting LoadTuner::Record(int64_t now_ns, int64_t waited_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!Tunes()) return now_;
  if (window_start_ns_ < 0) {  // the first hand-out starts the first window
    window_start_ns_ = last_ns_ = now_ns;
    return now_;
  }
  if (interrupted_ns_ >= 0) {  // the consumer's time between epochs does not count
    window_start_ns_ += std::max<int64_t>(0, interrupted_ns_ - last_ns_);
    interrupted_ns_ = -1;
  }
  last_ns_ = now_ns;
  ++window_batches_;
  window_wait_ns_ += waited_ns;
  const double seconds = static_cast<double>(now_ns - window_start_ns_) * 1e-9;
  if (window_batches_ < kWindowBatches || seconds < kWindowSeconds) return now_;
  const double rate = window_batches_ / seconds;
  const double wait = std::min(1.0, static_cast<double>(window_wait_ns_) * 1e-9 / seconds);
  window_start_ns_ = now_ns;
  window_batches_ = 0;
  window_wait_ns_ = 0;
  const Setting was = now_;
  if (settling_) {
    settling_ = false;
  } else {
    WindowDone(rate, wait);
  }
  settling_ = !(now_ == was);
  return now_;
}

void LoadTuner::WindowDone(double rate, double wait) {
  switch (phase_) {
    case Phase::kWarmup:
      phase_ = Phase::kBase;
      return;
    case Phase::kBase:
      return FromBase(rate, wait);
    case Phase::kFewerThreads:
      // The pace is judged even when the consumer hardly waited: a CPU training step can run
      // slower beside a loader with too few threads without waiting for it (issue 19, torch:4).
      if (wait < kKeepWait && rate >= (1 - kTolerance) * pace_) {
        pace_ = std::max(pace_, rate);
        why_ = "with " + Threads(now_.threads) + " the consumer keeps its pace (it waited " + Percent(wait) +
               ", " + Rate(rate) + ")";
        if (now_.threads > 1) return TryFewerThreads();
        return Settle(why_);
      }
      now_ = before_;
      return Settle("consumer-bound; " + Threads(before_.threads) + ": fewer slowed it (it waited " +
                    Percent(wait) + ", " + Rate(rate) + " against " + Rate(pace_) + ")");
    case Phase::kMoreIo: {
      bool gained = false;
      if (!ProbeDecided(rate, &gained)) return;
      if (gained) {
        why_ = std::to_string(now_.io) + " I/O threads, prefetch " + std::to_string(now_.prefetch) + " gained (" +
               Rate(rate) + " against " + Rate(base_rate_) + ")";
        base_rate_ = rate;
        if (now_.io < scope_.io_max) {
          before_ = now_;
          now_ = MoreIo(now_);
          return StartProbe(Phase::kMoreIo);
        }
      } else {
        now_ = before_;
      }
      io_done_ = true;
      return LoaderBound(base_rate_, wait);
    }
    case Phase::kDeeperPrefetch: {
      bool gained = false;
      if (!ProbeDecided(rate, &gained)) return;
      prefetch_tried_ = true;
      if (gained)
        return Settle("loader-bound; prefetch " + std::to_string(now_.prefetch) + " gained (" + Rate(rate) +
                      " against " + Rate(base_rate_) + ")",
                      true);
      now_ = before_;
      return Settle("loader-bound at all " + std::to_string(now_.threads) + " threads, " + std::to_string(now_.io) +
                        " I/O threads; prefetch " +
                    std::to_string(before_.prefetch) + " (a deeper one gave " + Rate(rate) + " against " +
                    Rate(base_rate_) + ")",
                    true);
    }
    case Phase::kSettled:
      restart_windows_ = !settled_waiting_ && wait > kLoaderBound ? restart_windows_ + 1 : 0;
      if (restart_windows_ < kRestartWindows) return;
      restart_windows_ = 0;
      now_.threads = all_.threads;
      phase_ = Phase::kBase;
      why_ = "the consumer waited " + Percent(wait) + " again: searching from all threads";
      return;
  }
}

// A window at the setting the search stands on: which way to go.
void LoadTuner::FromBase(double rate, double wait) {
  base_rate_ = rate;
  if (wait > kLoaderBound) {
    if (now_.threads < all_.threads) {
      now_.threads = all_.threads;
      why_ = "the consumer waited " + Percent(wait) + ": back to all threads";
      return;
    }
    return LoaderBound(rate, wait);
  }
  if (wait < kConsumerBound && scope_.threads && now_.threads > 1) {
    if (now_.threads == all_.threads) pace_ = rate;
    return TryFewerThreads();
  }
  Settle((wait < kConsumerBound ? "consumer-bound" : "balanced") + std::string(" (the consumer waited ") +
         Percent(wait) + ", " + Rate(rate) + ")");
}

void LoadTuner::LoaderBound(double rate, double wait) {
  if (!io_done_ && scope_.io_max > now_.io) {
    before_ = now_;
    now_ = MoreIo(now_);
    StartProbe(Phase::kMoreIo);
    why_ = "loader-bound (the consumer waited " + Percent(wait) + "): trying " + std::to_string(now_.io) +
           " I/O threads, prefetch " + std::to_string(now_.prefetch);
    return;
  }
  if (scope_.prefetch && !prefetch_tried_) {
    before_ = now_;
    now_.prefetch += kPrefetchStep;
    StartProbe(Phase::kDeeperPrefetch);
    why_ = "loader-bound (the consumer waited " + Percent(wait) + "): trying prefetch " + std::to_string(now_.prefetch);
    return;
  }
  Settle("loader-bound at all " + std::to_string(now_.threads) + " threads, " + std::to_string(now_.io) +
             " I/O threads, prefetch " + std::to_string(now_.prefetch) + " (the consumer waited " + Percent(wait) +
             ", " + Rate(rate) + ")",
         true);
}

LoadTuner::Setting LoadTuner::MoreIo(Setting s) const {
  s.io = std::min(scope_.io_max, 2 * s.io);
  if (scope_.prefetch) s.prefetch = std::max(kMinPrefetch, s.prefetch - kPrefetchStep);
  return s;
}

void LoadTuner::StartProbe(Phase phase) {
  phase_ = phase;
  probe_wins_ = 0;
}

bool LoadTuner::ProbeDecided(double rate, bool* gained) {
  *gained = rate >= (1 + kGain) * base_rate_;
  return !*gained || ++probe_wins_ >= kProbeWindows;
}

void LoadTuner::TryFewerThreads() {
  before_ = now_;
  now_.threads -= std::max(1, std::min(all_.threads / 4, now_.threads / 2));
  phase_ = Phase::kFewerThreads;
}

void LoadTuner::Settle(std::string why, bool loader_bound) {
  phase_ = Phase::kSettled;
  why_ = std::move(why);
  settled_waiting_ = loader_bound;
  restart_windows_ = 0;
}

void LoadTuner::Interrupt(int64_t now_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  if (window_start_ns_ >= 0) interrupted_ns_ = now_ns;
}

LoadTuner::Setting LoadTuner::setting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return now_;
}

bool LoadTuner::settled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return phase_ == Phase::kSettled;
}

std::string LoadTuner::why() const {
  std::lock_guard<std::mutex> lock(mu_);
  return why_;
}

}  // namespace sluice
