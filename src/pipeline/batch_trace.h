// BatchTrace: where the GPU path's batches spend their time. Each batch records when it passes
// each stage (a clock read per stage). With the environment variable SLUICE_TRACE set, the loader
// prints the mean time between stages and how busy the JPEG engines were to stderr when it is
// destroyed. A consumer that waits long for a batch gets a report of where every batch in
// flight stands (after 30 s, or 10 s with SLUICE_TRACE).
//
// Thread-safety: Add() and Summary() may be called from any thread.
#ifndef SLUICE_PIPELINE_BATCH_TRACE_H_
#define SLUICE_PIPELINE_BATCH_TRACE_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace sluice {

class BatchTrace {
 public:
  // The stages, in the order a batch passes them. kEngineDone: the engines' GPU work finished
  // (a host callback on the engine stream).
  enum Point {
    kScheduled, kPrepared, kPlanned, kEngineStart, kEngineHostEnd, kEngineDone, kCpuSideDone,
    kLaunched, kTaken, kNumPoints
  };
  using Times = std::array<std::atomic<int64_t>, kNumPoints>;  // NowNs(), 0 = not reached

  static bool Enabled();  // SLUICE_TRACE is set (read once)

  void Add(const Times& t);
  // One batch's progress, for a stall report: "scheduled +0.0 prepared +3.1 ..." (ms).
  static std::string Describe(const Times& t);
  // Mean milliseconds from each stage to the next, the engines' busy share of the wall time
  // (the union of [kEngineStart, kEngineDone] intervals) and batches per second.
  std::string Summary() const;

 private:
  mutable std::mutex mu_;
  std::vector<std::array<int64_t, kNumPoints>> rows_;
};

}  // namespace sluice

#endif  // SLUICE_PIPELINE_BATCH_TRACE_H_
