// SkipLog: the samples a loader left out (on_error="skip"), with their reasons, for stats().
// Keeps a count of all and the first kMaxListed in full.
//
// Thread-safety: all methods may be called from any thread.
#ifndef SLUICE_PIPELINE_SKIP_LOG_H_
#define SLUICE_PIPELINE_SKIP_LOG_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "sluice/loader_stats.h"
#include "sluice/source.h"

namespace sluice {

class SkipLog {
 public:
  static constexpr size_t kMaxListed = 1000;
  explicit SkipLog(const Source& source) : source_(source) {}

  // Sample `index` of epoch `epoch` was skipped for `status` (whose message may start with
  // "path: "; the listed reason drops it).
  void Record(int64_t index, int64_t epoch, const Status& status);
  void Fill(LoaderStats* stats) const;  // skipped_count and skipped
  void Reset();

 private:
  const Source& source_;
  mutable std::mutex mu_;
  std::atomic<int64_t> count_{0};
  std::vector<SkippedSample> listed_;
};

}  // namespace sluice

#endif  // SLUICE_PIPELINE_SKIP_LOG_H_
