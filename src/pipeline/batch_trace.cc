#include "pipeline/batch_trace.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace sluice {

namespace {
const char* const kNames[BatchTrace::kNumPoints] = {
    "scheduled", "prepared", "planned", "engine_start", "engine_host_end", "engine_done",
    "cpu_side_done", "launched", "taken"};
}  // namespace

bool BatchTrace::Enabled() {
  static const bool on = std::getenv("SLUICE_TRACE") != nullptr;
  return on;
}

void BatchTrace::Add(const Times& t) {
  std::array<int64_t, kNumPoints> row;
  for (int i = 0; i < kNumPoints; ++i) row[static_cast<size_t>(i)] = t[static_cast<size_t>(i)].load();
  std::lock_guard<std::mutex> lock(mu_);
  rows_.push_back(row);
}

std::string BatchTrace::Describe(const Times& t) {
  std::string out;
  char buf[64];
  const int64_t t0 = t[kScheduled].load();
  for (int p = 0; p < kNumPoints; ++p) {
    const int64_t v = t[static_cast<size_t>(p)].load();
    if (v == 0) continue;
    std::snprintf(buf, sizeof(buf), " %s +%.1f", kNames[p], static_cast<double>(v - t0) * 1e-6);
    out += buf;
  }
  return out;
}

std::string BatchTrace::Summary() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (rows_.size() < 2) return "sluice trace: fewer than 2 batches\n";
  std::string out = "sluice trace: " + std::to_string(rows_.size()) + " batches; mean ms from the stage before:";
  char buf[96];
  // Each stage against the latest earlier stage the batch reached.
  for (int p = 1; p < kNumPoints; ++p) {
    double sum = 0;
    int n = 0;
    for (const auto& r : rows_) {
      if (r[static_cast<size_t>(p)] == 0) continue;
      for (int q = p - 1; q >= 0; --q) {
        if (r[static_cast<size_t>(q)] == 0) continue;
        sum += static_cast<double>(r[static_cast<size_t>(p)] - r[static_cast<size_t>(q)]) * 1e-6;
        ++n;
        break;
      }
    }
    if (n > 0) {
      std::snprintf(buf, sizeof(buf), " %s %.2f", kNames[p], sum / n);
      out += buf;
    }
  }
  // Engine busy share and batch rate over the traced span.
  std::vector<std::pair<int64_t, int64_t>> busy;
  int64_t first = rows_.front()[kScheduled], last = 0;
  for (const auto& r : rows_) {
    first = std::min(first, r[kScheduled]);
    last = std::max(last, r[kTaken]);
    if (r[kEngineStart] != 0 && r[kEngineDone] != 0) busy.emplace_back(r[kEngineStart], r[kEngineDone]);
  }
  std::sort(busy.begin(), busy.end());
  int64_t covered = 0, end = 0;
  for (const auto& [a, b] : busy) {
    const int64_t from = std::max(a, end);
    if (b > from) covered += b - from;
    end = std::max(end, b);
  }
  const double wall = static_cast<double>(last - first) * 1e-9;
  std::snprintf(buf, sizeof(buf), "; engines busy %.0f%%; %.1f batches/s\n",
                wall > 0 ? 100.0 * static_cast<double>(covered) * 1e-9 / wall : 0.0,
                wall > 0 ? static_cast<double>(rows_.size()) / wall : 0.0);
  out += buf;
  return out;
}

}  // namespace sluice
