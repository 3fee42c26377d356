#include "pipeline/batch_trace.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <utility>

namespace sluice {
namespace {

// A batch's stage times in ms (0 = not reached), as NowNs() values.
void Set(BatchTrace::Times* t, std::initializer_list<std::pair<BatchTrace::Point, double>> ms) {
  for (auto& p : *t) p.store(0);
  for (const auto& [point, v] : ms) (*t)[point].store(static_cast<int64_t>(v * 1e6));
}

TEST(BatchTrace, MeansBetweenStagesEngineBusyShareAndRate) {
  using P = BatchTrace;
  BatchTrace trace;
  BatchTrace::Times t;
  // Batch A: scheduled at 1 ms, prepared +4, planned +1, engines 10..30 (host end 29), taken 40.
  Set(&t, {{P::kScheduled, 1}, {P::kPrepared, 5}, {P::kPlanned, 6}, {P::kEngineStart, 10},
           {P::kEngineHostEnd, 29}, {P::kEngineDone, 30}, {P::kLaunched, 31}, {P::kTaken, 40}});
  trace.Add(t);
  // Batch B: no engine part; prepared +6, CPU side done 20 ms after planning; engines idle.
  Set(&t, {{P::kScheduled, 21}, {P::kPrepared, 27}, {P::kPlanned, 28}, {P::kCpuSideDone, 48},
           {P::kLaunched, 49}, {P::kTaken, 51}});
  trace.Add(t);
  const std::string s = trace.Summary();
  // prepared: (4 + 6) / 2; planned: 1; engine_start 4 (A only); engine_host_end 19;
  // engine_done 1; cpu_side_done: B's 20 after planned; launched: A 1 after engine_done, B 1
  // after cpu_side_done; taken: (9 + 2) / 2.
  EXPECT_NE(s.find("2 batches"), std::string::npos) << s;
  EXPECT_NE(s.find("prepared 5.00 planned 1.00 engine_start 4.00 engine_host_end 19.00 engine_done 1.00 "
                   "cpu_side_done 20.00 launched 1.00 taken 5.50"),
            std::string::npos)
      << s;
  // Engines busy 20 of the 50 ms from the first scheduled (1) to the last taken (51); 2 batches
  // in 0.05 s.
  EXPECT_NE(s.find("engines busy 40%; 40.0 batches/s"), std::string::npos) << s;
}

TEST(BatchTrace, OverlappingEngineIntervalsCountOnce) {
  using P = BatchTrace;
  BatchTrace trace;
  BatchTrace::Times t;
  Set(&t, {{P::kScheduled, 0}, {P::kEngineStart, 10}, {P::kEngineDone, 30}, {P::kTaken, 50}});
  trace.Add(t);
  Set(&t, {{P::kScheduled, 0.001}, {P::kEngineStart, 20}, {P::kEngineDone, 40}, {P::kTaken, 100}});
  trace.Add(t);
  // [10, 30] and [20, 40]: 30 ms busy of 100.
  EXPECT_NE(trace.Summary().find("engines busy 30%"), std::string::npos) << trace.Summary();
}

TEST(BatchTrace, DescribeListsReachedStagesFromScheduling) {
  using P = BatchTrace;
  BatchTrace::Times t;
  Set(&t, {{P::kScheduled, 100}, {P::kPrepared, 103.1}, {P::kEngineStart, 110}});
  EXPECT_EQ(BatchTrace::Describe(t), " scheduled +0.0 prepared +3.1 engine_start +10.0");
}

TEST(BatchTrace, FewerThanTwoBatches) {
  BatchTrace trace;
  EXPECT_NE(trace.Summary().find("fewer than 2 batches"), std::string::npos);
}

}  // namespace
}  // namespace sluice
