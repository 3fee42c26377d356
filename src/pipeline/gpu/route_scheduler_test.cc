#include "pipeline/gpu/route_scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace sluice {
namespace {

// A simulated machine: the engines decode `hw_rate` images/s, slowed by `interference` (a
// fraction) whenever the CPU side works beside them; the CPU side decodes `cpu_rate`. A batch
// takes as long as its slower side, give or take 2% of noise; the clock moves by that much.
struct Machine {
  double hw_rate, cpu_rate, interference;
  double BatchSeconds(int hw, int cpu) const {
    const double engines = hw_rate * (cpu > 0 ? 1 - interference : 1.0);
    return std::max(hw / engines, cpu / cpu_rate);
  }
};

struct Outcome {
  double rate = 0;         // images/s over the measured batches
  double at_zero = 0;      // of those batches, the share planned with no CPU side
  double mean_share = 0;
};

// Drives `s` for `warmup` batches, then measures `measured` more.
Outcome Drive(RouteScheduler& s, const Machine& m, int warmup, int measured, int64_t* clock_ns, uint32_t* noise) {
  Outcome r;
  double seconds = 0;
  for (int b = 0; b < warmup + measured; ++b) {
    const RouteScheduler::Split split = s.Plan(256, 256);
    *noise = *noise * 1664525u + 1013904223u;
    const double jitter = 1 + 0.02 * ((*noise >> 8) / double(1u << 24) - 0.5) * 2;
    const double t = m.BatchSeconds(split.hardware, 256 - split.hardware) * jitter;
    *clock_ns += static_cast<int64_t>(t * 1e9);
    s.RecordLaunch(split.generation, 256, *clock_ns);
    if (b < warmup) continue;
    seconds += t;
    r.at_zero += split.hardware == 256;
    r.mean_share += 1 - split.hardware / 256.0;
  }
  r.rate = measured * 256 / seconds;
  r.at_zero /= measured;
  r.mean_share /= measured;
  return r;
}

Outcome Drive(const Machine& m, int warmup, int measured) {
  RouteScheduler s(true, true);
  int64_t clock = 0;
  uint32_t noise = 1;
  return Drive(s, m, warmup, measured, &clock, &noise);
}

TEST(RouteScheduler, TheEnginesAloneStayWhenTheCpuSideSlowsThem) {
  // Engines at 14,000/s lose 25% with CPU decoding beside them; the CPU side adds 3,000/s. The
  // best split then gives 13,500/s (both finish together), below the engines alone.
  const Outcome r = Drive({14000, 3000, 0.25}, 200, 2000);
  EXPECT_GT(r.rate, 0.98 * 14000);
  EXPECT_GT(r.at_zero, 0.8);
}

TEST(RouteScheduler, ClimbsToTheSplitWhereTheCpuSideAdds) {
  // No interference, 14,000 + 4,000/s: the best share on the 1/16 grid is 3/16 (17,231/s).
  const Outcome r = Drive({14000, 4000, 0.0}, 400, 2000);
  EXPECT_GT(r.rate, 0.97 * 17231);
  EXPECT_NEAR(r.mean_share, 3.0 / 16, 1.5 / 16);
}

// Drives `s` on `m` for `batches` batches, reporting the engines' time and the CPU side's cost
// as the executor does, in batches of `n`; returns the mean share planned from batch `from` on.
double DriveWithCosts(RouteScheduler& s, const Machine& m, int batches, int from, double* rate = nullptr,
                      int threads = 8, int n = 256) {
  int64_t clock = 0;
  double share_sum = 0, seconds = 0;
  for (int b = 0; b < batches; ++b) {
    const RouteScheduler::Split split = s.Plan(n, n);
    const int cpu = n - split.hardware;
    const double t = m.BatchSeconds(split.hardware, cpu);
    const double engines = m.hw_rate * (cpu > 0 ? 1 - m.interference : 1.0);
    s.RecordEngines(split.hardware, split.hardware / engines);
    if (cpu > 0) s.RecordCpuSide(DecodeRoute::kCpu, cpu, cpu * threads / m.cpu_rate);
    clock += static_cast<int64_t>(t * 1e9);
    s.RecordLaunch(split.generation, n, clock);
    if (b >= from) share_sum += cpu / static_cast<double>(n), seconds += t;
  }
  if (rate != nullptr) *rate = (batches - from) * n / seconds;
  return share_sum / (batches - from);
}

// Batches at the engines alone out of 700 (6 s at 30,000/s: a benchmark row) on a machine whose
// engines alone are best (30,000/s; a CPU share slows them by 25%), where each of the two engine
// threads pays 0.2 s the first time it decodes at a new engine share (nvJPEG initializes a state
// for the new call size; measured 0.1-0.2 s on H200s). The threads take runs of 3 batches from a
// share change on, so the second thread's initialization falls after the settling launches,
// inside the window. `report`: whether RecordEngines is told (`initialized`).
int AloneWithInitializations(bool report) {
  RouteScheduler s(true, true, 12);
  const Machine m{30000, 3000, 0.25};
  std::set<std::pair<int, int>> states;  // (thread, call size)
  int64_t clock = 0;
  int alone = 0, since = 0, last = -1;  // batches since the engines' share changed
  for (int b = 0; b < 700; ++b) {
    const RouteScheduler::Split split = s.Plan(256, 256);
    since = split.hardware == last ? since + 1 : 0;
    last = split.hardware;
    const int cpu = 256 - split.hardware;
    const bool initialized = states.insert({since / 3 % 2, split.hardware}).second;
    const double setup = initialized ? 0.2 : 0.0;
    const double engines = m.hw_rate * (cpu > 0 ? 1 - m.interference : 1.0);
    s.RecordEngines(split.hardware, split.hardware / engines + setup, report && initialized);
    if (cpu > 0) s.RecordCpuSide(DecodeRoute::kCpu, cpu, cpu * 12 / m.cpu_rate);
    clock += static_cast<int64_t>((m.BatchSeconds(split.hardware, cpu) + setup) * 1e9);
    s.RecordLaunch(split.generation, 256, clock);
    alone += split.hardware == 256;
  }
  return alone;
}

TEST(RouteScheduler, AStateInitializationDoesNotCountAgainstItsShare) {
  // Counted, an initialization sinks the first window at each new share, that of a share of 0
  // too (as on the H200: the engines alone read 19,202 img/s there against ~30,000), and the
  // climb takes longer to reach 0 (about 160 of 700 batches there); reported, the window starts
  // over after it and the engines alone are found at the first probe (about 250).
  const int reported = AloneWithInitializations(true), counted = AloneWithInitializations(false);
  EXPECT_GT(reported, 220);
  EXPECT_LT(counted, 0.8 * reported);
}

TEST(RouteScheduler, InitializationsAtEveryBatchDoNotStopTheClimb) {
  // The engines re-initialize a state after each call they reject (a corrupt file in every
  // batch): past a few a share, initializations count as time like any other, and the windows
  // still end. The engines alone (best here) are found as without them.
  RouteScheduler s(true, true, 12);
  const Machine m{14000, 3000, 0.25};
  int64_t clock = 0;
  int alone = 0;
  for (int b = 0; b < 2200; ++b) {
    const RouteScheduler::Split split = s.Plan(256, 256);
    const int cpu = 256 - split.hardware;
    s.RecordEngines(split.hardware, split.hardware / (m.hw_rate * (cpu > 0 ? 1 - m.interference : 1.0)), true);
    clock += static_cast<int64_t>(m.BatchSeconds(split.hardware, cpu) * 1e9);
    s.RecordLaunch(split.generation, 256, clock);
    if (b >= 200) alone += split.hardware == 256;
  }
  EXPECT_GT(alone, 1600);
}

TEST(RouteScheduler, StartsFromTheBalancedShare) {
  // 12 CPU-side threads: by the prior costs (60 us of engine time, 2.5 ms of thread time per
  // image) both sides finish together at 0.22 of a batch, 0.9 of it is 3/16 on the grid. On a
  // machine whose engines do 14,000/s and whose CPU side does 4,000/s (3 ms per image per thread)
  // that is also the balanced share by the measured costs, and the best one there (17,231/s):
  // the scheduler starts there and stays.
  const Machine m{14000, 4000, 0.0};
  RouteScheduler s(true, true, 12);
  EXPECT_DOUBLE_EQ(s.cpu_share(), 3.0 / 16);
  double rate = 0;
  EXPECT_NEAR(DriveWithCosts(s, m, 600, 0, &rate, 12), 3.0 / 16, 0.25 / 16);
  EXPECT_DOUBLE_EQ(s.balanced_share(), 3.0 / 16);
  EXPECT_GT(rate, 0.97 * 17231);
}

TEST(RouteScheduler, KeepsItsLastWindowsForTheStats) {
  // The windows it measured, oldest first: the start holds 3/16 for kBalancedHoldWindows, each
  // at the simulated machine's rate there (17,231/s, the engines never idle). After thousands of
  // batches only the last kKeptWindows remain, each at a share of the grid, in a known phase.
  RouteScheduler s(true, true, 12);
  const Machine m{14000, 4000, 0.0};
  EXPECT_TRUE(s.windows().empty());
  DriveWithCosts(s, m, 200, 0, nullptr, 12);
  const std::vector<RouteWindow> start = s.windows();
  ASSERT_GE(start.size(), static_cast<size_t>(RouteScheduler::kBalancedHoldWindows));
  for (int i = 0; i < RouteScheduler::kBalancedHoldWindows; ++i) {
    const RouteWindow& w = start[static_cast<size_t>(i)];
    EXPECT_EQ(w.phase, "hold") << i;
    EXPECT_DOUBLE_EQ(w.cpu_share, 3.0 / 16) << i;
    EXPECT_NEAR(w.images_per_s, 17231, 0.01 * 17231) << i;
    EXPECT_GE(w.seconds, RouteScheduler::kWindowSeconds) << i;
    EXPECT_NEAR(w.engine_busy, 1.0, 0.01) << i;
  }
  RouteScheduler longer(true, true, 12);
  DriveWithCosts(longer, m, 5000, 0, nullptr, 12);
  const std::vector<RouteWindow> last = longer.windows();
  EXPECT_EQ(last.size(), static_cast<size_t>(RouteScheduler::kKeptWindows));
  for (const RouteWindow& w : last) {
    EXPECT_TRUE(w.phase == "hold" || w.phase == "probe" || w.phase == "check") << w.phase;
    EXPECT_DOUBLE_EQ(std::round(w.cpu_share * 16), w.cpu_share * 16) << w.cpu_share;
  }
}

TEST(RouteScheduler, SmallBatchesStartWithTheEnginesAlone) {
  // Batches under 64 start at a share of 0 (their engine calls are small already); from 64 up,
  // at the balanced share by the prior costs. A batch of 32 at the start goes to the engines
  // whole, and a second of them too: nothing is owed.
  RouteScheduler small(true, true, 12, 32), large(true, true, 12, 64);
  EXPECT_EQ(small.cpu_share(), 0.0);
  EXPECT_EQ(small.Plan(32, 32).hardware, 32);
  EXPECT_EQ(small.Plan(32, 32).hardware, 32);
  EXPECT_DOUBLE_EQ(large.cpu_share(), 3.0 / 16);
  // Where the CPU side adds (engines 14,000/s untouched by it, the CPU side 4,000/s), the
  // climb from 0 still reaches a share that gains, in batches of 32: the best split there sends
  // 8 of 32 to the CPU side (16,000/s: both sides take 2 ms a batch), the engines alone 14,000/s.
  RouteScheduler climbs(true, true, 12, 32);
  double rate = 0;
  EXPECT_GT(DriveWithCosts(climbs, {14000, 4000, 0.0}, 20000, 4000, &rate, 12, 32), 1.5 / 16);
  EXPECT_GT(rate, 0.97 * 16000);
}

TEST(RouteScheduler, SmallBatchesTryNoCpuShareWhileTheEnginesHaveTimeToSpare) {
  // Batches of 32 whose engines (24,000/s) are busy about 90% of the time: the host work around
  // their calls sets the pace, and a CPU share (8,000/s) slows it by 30%; batch times scatter by
  // 5%. Each probe of a CPU share would cost its windows. None is tried: every batch goes to the
  // engines whole, every window is at 0.
  RouteScheduler s(true, true, 12, 32);
  int64_t clock = 0;
  uint32_t noise = 3;
  int with_cpu = 0;
  for (int b = 0; b < 20000; ++b) {
    const RouteScheduler::Split split = s.Plan(32, 32);
    const int cpu = 32 - split.hardware;
    with_cpu += cpu > 0;
    noise = noise * 1664525u + 1013904223u;
    const double jitter = 1 + 0.05 * ((noise >> 8) / double(1u << 24) - 0.5) * 2;
    const double engines = split.hardware / 24000.0;
    s.RecordEngines(split.hardware, engines);
    if (cpu > 0) s.RecordCpuSide(DecodeRoute::kCpu, cpu, cpu * 12 / 8000.0);
    const double fed = engines / 0.9 * (cpu > 0 ? 1.3 : 1.0);
    clock += static_cast<int64_t>(std::max(fed, cpu / 8000.0) * jitter * 1e9);
    s.RecordLaunch(split.generation, 32, clock);
  }
  EXPECT_EQ(with_cpu, 0);
  ASSERT_FALSE(s.windows().empty());
  for (const RouteWindow& w : s.windows()) {
    EXPECT_EQ(w.cpu_share, 0.0);
    EXPECT_LT(w.engine_busy, RouteScheduler::kBusyForUp);
  }
}

TEST(RouteScheduler, LeavesTheBalancedShareWhenTheCpuSideSlowsTheEngines) {
  // The engines lose 25% with CPU decoding beside them: the balanced share (3/16 by the costs)
  // gives 12,900/s, the engines alone 14,000/s. The probes at 0 find it.
  RouteScheduler s(true, true, 8);
  double rate = 0;
  const double share = DriveWithCosts(s, {14000, 3000, 0.25}, 2500, 500, &rate);
  EXPECT_LT(share, 0.5 / 16);
  EXPECT_GT(rate, 0.97 * 14000);
}

TEST(RouteScheduler, AMachineWarmingUpDoesNotPassForAGain) {
  // Batches of 32 (the VOC-like set): the engines do 24,000/s alone and lose 30% in a batch with
  // CPU-side samples, which the CPU side (8,000/s) finishes sooner; a share of 1/16 is then 2%
  // slower than none, 1/8 4%. The machine warms up: every rate rises from 0.7x to 1x over the
  // first `rise` seconds (a window is 0.25 s). A probe measured after the windows it is compared
  // with reads up to several percent fast from the rise alone. Each gain is confirmed against a
  // window back at the held share after it, so the engines alone stay.
  for (const double rise : {2.0, 3.0, 4.0}) {
    RouteScheduler s(true, true, 12, 32);
    const Machine m{24000, 8000, 0.3};
    int64_t clock = 0;
    int alone = 0, after = 0;
    double seconds = 0;
    while (clock < 12'000'000'000) {
      const double t_now = static_cast<double>(clock) * 1e-9;
      const double speed = 1 - 0.3 * std::max(0.0, 1 - t_now / rise);
      const RouteScheduler::Split split = s.Plan(32, 32);
      const int cpu = 32 - split.hardware;
      const double engines = speed * m.hw_rate * (cpu > 0 ? 1 - m.interference : 1.0);
      s.RecordEngines(split.hardware, split.hardware / engines);
      if (cpu > 0) s.RecordCpuSide(DecodeRoute::kCpu, cpu, cpu * 12 / (speed * m.cpu_rate));
      const double t = m.BatchSeconds(split.hardware, cpu) / speed;
      clock += static_cast<int64_t>(t * 1e9);
      s.RecordLaunch(split.generation, 32, clock);
      if (t_now < rise) continue;
      ++after;
      alone += split.hardware == 32;
      seconds += t;
    }
    EXPECT_GT(alone, 0.9 * after) << "rise over " << rise << " s";
    EXPECT_GT(after * 32 / seconds, 0.99 * 24000) << "rise over " << rise << " s";
  }
}

TEST(RouteScheduler, StepsDownAreNotProbedWhileTheEnginesAreBusyAndUnslowed) {
  // 14,000 + 4,000/s, no interference: at 3/16 the engines are the slower side, busy throughout.
  // A step down can only add to their work; once a share of 0 has shown their time alone equal
  // to their time at 3/16, the climb probes upward only.
  const Machine m{14000, 4000, 0.0};
  RouteScheduler s(true, true, 12);
  DriveWithCosts(s, m, 1500, 0);  // the start's hold and the first cycles
  int64_t clock = 0;
  int below = 0, probes_up = 0;
  for (int b = 0; b < 4000; ++b) {
    const RouteScheduler::Split split = s.Plan(256, 256);
    const int cpu = 256 - split.hardware;
    below += cpu < 48;
    probes_up += cpu > 48;
    s.RecordEngines(split.hardware, split.hardware / m.hw_rate);
    if (cpu > 0) s.RecordCpuSide(DecodeRoute::kCpu, cpu, cpu * 12 / m.cpu_rate);
    clock += static_cast<int64_t>(m.BatchSeconds(split.hardware, cpu) * 1e9);
    s.RecordLaunch(split.generation, 256, clock);
  }
  EXPECT_DOUBLE_EQ(s.cpu_share(), 3.0 / 16);
  EXPECT_EQ(below, 0);
  EXPECT_GT(probes_up, 0);  // the climb still looks the other way
}

TEST(RouteScheduler, AProbeFarBelowTheHeldShareIsLeftOutOfCyclesAfterIt) {
  // 14,000 + 4,000/s, no interference: 3/16 gives 17,231/s, 1/4 and 1/8 16,000 (7% less), the
  // engines alone 14,000 (19% less). Every full cycle still tries 1/8, but 0 only in every other
  // one at most (the cycle after each loss by far leaves it out, then two, then four).
  RouteScheduler s(true, true);
  int64_t clock = 0;
  uint32_t noise = 3;
  const Outcome r = Drive(s, {14000, 4000, 0.0}, 0, 2100, &clock, &noise);
  int cycles = 0, at_zero = 0;
  for (const RouteWindow& w : s.windows()) {
    if (w.phase != "probe") continue;
    cycles += std::abs(w.cpu_share - 2.0 / 16) < 1e-9;
    at_zero += w.cpu_share == 0;
  }
  EXPECT_DOUBLE_EQ(s.cpu_share(), 3.0 / 16);
  EXPECT_GE(cycles, 3);
  EXPECT_GE(at_zero, 1);  // still tried
  EXPECT_LE(at_zero, (cycles + 1) / 2) << cycles << " cycles";
  EXPECT_GT(r.rate, 0.97 * 17231);
}

TEST(RouteScheduler, FollowsAMachineThatChanges) {
  RouteScheduler s(true, true);
  int64_t clock = 0;
  uint32_t noise = 7;
  const Outcome adds = Drive(s, {14000, 4000, 0.0}, 400, 600, &clock, &noise);
  EXPECT_GT(adds.mean_share, 0.1);
  // Now CPU decoding slows the engines by a third: back to the engines alone, within the longest
  // hold (128 windows) and a cycle of probes.
  const Outcome slows = Drive(s, {14000, 4000, 0.33}, 1000, 1500, &clock, &noise);
  EXPECT_GT(slows.at_zero, 0.8);
  EXPECT_GT(slows.rate, 0.97 * 14000);
}

TEST(RouteScheduler, OnlyLaunchesOfTheCurrentShareCount) {
  RouteScheduler s(true, true);
  const double start = s.cpu_share();
  EXPECT_DOUBLE_EQ(start, 2.0 / 16);  // balanced by the prior costs, 8 CPU-side threads
  const int64_t gen = s.Plan(256, 256).generation;
  // Launches of batches planned at another share, however fast, move nothing.
  for (int i = 0; i < 100; ++i) s.RecordLaunch(gen + 5, 256, i);
  EXPECT_EQ(s.cpu_share(), start);
  EXPECT_EQ(s.Plan(256, 256).generation, gen);
  // The start is held for kBalancedHoldWindows windows. Launches 20 ms apart: the first marks
  // the clock, then a window is 13 gaps (kWindow launches and kWindowSeconds); then the climb
  // tries a step.
  const int per_window = static_cast<int>(std::ceil(RouteScheduler::kWindowSeconds / 0.02));
  ASSERT_GE(per_window, RouteScheduler::kWindow);
  const int launches = 1 + RouteScheduler::kBalancedHoldWindows * per_window;
  for (int i = 0; i < launches - 1; ++i) s.RecordLaunch(gen, 256, int64_t{i} * 20'000'000);
  EXPECT_EQ(s.cpu_share(), start);
  s.RecordLaunch(gen, 256, int64_t{launches - 1} * 20'000'000);
  EXPECT_EQ(s.cpu_share(), start + RouteScheduler::kShareStep);
  EXPECT_EQ(s.Plan(256, 256).generation, gen + 1);
  // The probe's first kSettleLaunches launches and the one after them only mark the clock: a
  // window at the new share needs as many launches again.
  for (int i = 0; i < RouteScheduler::kSettleLaunches + per_window; ++i)
    s.RecordLaunch(gen + 1, 256, int64_t{launches + i} * 20'000'000);
  EXPECT_EQ(s.cpu_share(), start + RouteScheduler::kShareStep);  // one launch short
  // A gap across an interruption (an epoch's end) is not measured: a long one neither ends a
  // window nor lowers its rate.
  RouteScheduler t(true, true);
  for (int i = 0; i < launches - 1; ++i) t.RecordLaunch(0, 256, int64_t{i} * 20'000'000);
  t.Interrupt();
  t.RecordLaunch(0, 256, int64_t{100'000'000'000});
  EXPECT_EQ(t.cpu_share(), start);  // that launch only marked the clock
  t.RecordLaunch(0, 256, int64_t{100'020'000'000});
  EXPECT_EQ(t.cpu_share(), start + RouteScheduler::kShareStep);  // the window ended at its rate
}

TEST(RouteScheduler, WithoutEnginesEverythingGoesToTheCpuSide) {
  RouteScheduler s(false, true);
  EXPECT_EQ(s.cpu_share(), 1.0);
  for (int i = 0; i < 50; ++i) s.RecordLaunch(0, 256, int64_t{i} * 1'000'000);
  EXPECT_EQ(s.Plan(256, 256).hardware, 0);
}

TEST(RouteScheduler, HardwareTakesOnlyEligibleSamples) {
  RouteScheduler s(true, true);
  EXPECT_LE(s.Plan(256, 10).hardware, 10);
  EXPECT_EQ(s.Plan(256, 0).hardware, 0);
}

TEST(RouteScheduler, EngineShareComesInGrainsForFewCallSizes) {
  // Whatever the share settles at, a batch of 256 sends a multiple of 16 to the engines (at
  // most 16 sizes, so the engines' decoder re-initializes nothing); a small batch, any number.
  RouteScheduler s(true, true);
  int64_t clock = 0;
  std::set<int> sizes;
  for (int b = 0; b < 400; ++b) {
    const RouteScheduler::Split split = s.Plan(256, 256);
    EXPECT_EQ(split.hardware % RouteScheduler::kHardwareGrain, 0) << split.hardware;
    sizes.insert(split.hardware);
    // Rates that wander, and any CPU share faster than none: the share moves.
    clock += (b * 7919) % 13 * 100'000 + (split.hardware == 256 ? 13'000'000 : 10'000'000);
    s.RecordLaunch(split.generation, 256, clock);
  }
  EXPECT_GT(sizes.size(), 2u);
  EXPECT_EQ(s.Plan(256, 40).hardware % RouteScheduler::kHardwareGrain, 0);
  EXPECT_LE(s.Plan(256, 40).hardware, 40);
  EXPECT_LE(s.Plan(256, 7).hardware, 7);
  RouteScheduler small(true, true);
  EXPECT_EQ(small.Plan(32, 32).hardware % (RouteScheduler::kHardwareGrain / 2), 0);
  EXPECT_GT(small.Plan(32, 32).hardware, 0);
  EXPECT_GT(small.Plan(10, 10).hardware, 0);
}

TEST(RouteScheduler, SmallBatchesGetTheShareOnAverage) {
  // A grain of the engines' part is a quarter of a batch of 64 and of 32: rounded batch by batch,
  // a share of 3/16 would send 16 of 64 (1/4) to the CPU side, and 2/16 none. Carried from batch
  // to batch, 64 batches give the share within a grain.
  for (const int n : {64, 32}) {
    for (const int threads : {4, 8, 12}) {  // the shares they start at (held: nothing is measured)
      RouteScheduler s(true, true, threads);
      const double share = s.cpu_share();
      if (threads == 12) {
        ASSERT_DOUBLE_EQ(share, 3.0 / 16);
      }
      const int grain = n == 64 ? RouteScheduler::kHardwareGrain : RouteScheduler::kHardwareGrain / 2;
      int cpu = 0;
      for (int b = 0; b < 64; ++b) {
        const RouteScheduler::Split split = s.Plan(n, n);
        EXPECT_EQ(split.hardware % grain, 0) << split.hardware;
        cpu += n - split.hardware;
      }
      EXPECT_NEAR(cpu, share * n * 64, grain) << "batch " << n << ", share " << share;
    }
  }
}

TEST(RouteScheduler, PicksTheCheaperCpuSideRouteAndExplores) {
  RouteScheduler s(false, true);
  for (int i = 0; i < 50; ++i) {
    s.RecordCpuSide(DecodeRoute::kCpu, 10, 0.05);
    s.RecordCpuSide(DecodeRoute::kHybrid, 10, 0.02);
  }
  EXPECT_NEAR(s.cpu_cost(DecodeRoute::kHybrid), 0.002, 1e-4);
  int explored = 0;
  for (int b = 0; b < 16; ++b) {
    const RouteScheduler::Split split = s.Plan(64, 64);
    EXPECT_EQ(split.hardware, 0);  // no engines
    EXPECT_EQ(split.cpu_side, DecodeRoute::kHybrid);
    explored += split.explore > 0;
  }
  EXPECT_EQ(explored, 2);  // every 8th batch
}

TEST(RouteScheduler, WithoutHybridEverythingCpuSideIsCpu) {
  RouteScheduler s(true, false);
  for (int i = 0; i < 20; ++i) s.RecordCpuSide(DecodeRoute::kHybrid, 10, 1e-6);
  const RouteScheduler::Split split = s.Plan(64, 64);
  EXPECT_EQ(split.cpu_side, DecodeRoute::kCpu);
  EXPECT_EQ(split.explore, 0);
}

TEST(RouteScheduler, RouteNames) {
  for (int i = 0; i < kNumRoutes; ++i) EXPECT_EQ(RouteIndex(kRoutes[i]), i);
  EXPECT_STREQ(DecodeRouteName(kRoutes[0]), "hardware");
  EXPECT_STREQ(DecodeRouteName(kRoutes[1]), "hybrid");
  EXPECT_STREQ(DecodeRouteName(kRoutes[2]), "cpu");
}

}  // namespace
}  // namespace sluice
