#include "pipeline/skip_log.h"

namespace sluice {

void SkipLog::Record(int64_t index, int64_t epoch, const Status& status) {
  count_.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mu_);
  if (listed_.size() >= kMaxListed) return;
  const std::string path = source_.name(index);
  std::string reason = status.message();
  if (reason.rfind(path + ": ", 0) == 0) reason = reason.substr(path.size() + 2);
  listed_.push_back(SkippedSample{path, index, epoch, std::move(reason)});
}

void SkipLog::Fill(LoaderStats* stats) const {
  stats->skipped_count = count_.load();
  std::lock_guard<std::mutex> lock(mu_);
  stats->skipped = listed_;
}

void SkipLog::Reset() {
  count_.store(0);
  std::lock_guard<std::mutex> lock(mu_);
  listed_.clear();
}

}  // namespace sluice
