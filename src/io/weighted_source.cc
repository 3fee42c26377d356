#include "io/weighted_source.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "core/fnv.h"
#include "core/rng.h"

namespace sluice {

namespace {

// The stream of an epoch's weighted draws (apart from the shuffle's and the transforms').
constexpr uint32_t kWeightStream = 0xFFFFFFFEu;

}  // namespace

Result<std::shared_ptr<const Source>> WeightedSource::Create(std::shared_ptr<const Source> base,
                                                             std::vector<double> weights, bool replacement) {
  if (static_cast<int64_t>(weights.size()) != base->size())
    return InvalidArgument("weights must hold one weight per sample (", base->size(), "), got ", weights.size());
  double sum = 0.0;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (!(std::isfinite(weights[i]) && weights[i] >= 0.0))
      return InvalidArgument("weights must be finite numbers >= 0, got ", weights[i], " for sample ", i);
    if (!replacement && weights[i] == 0.0)
      return InvalidArgument("weights without replacement must all be > 0 (every sample comes once an epoch); ",
                             "sample ", i, " (", base->name(static_cast<int64_t>(i)), ") has 0");
    sum += weights[i];
  }
  if (!(sum > 0.0)) return InvalidArgument("weights must have a positive sum");
  return std::shared_ptr<const Source>(new WeightedSource(std::move(base), std::move(weights), replacement));
}

WeightedSource::WeightedSource(std::shared_ptr<const Source> base, std::vector<double> weights, bool replacement)
    : base_(std::move(base)), weights_(std::move(weights)), replacement_(replacement) {
  cumulative_.resize(weights_.size());
  std::partial_sum(weights_.begin(), weights_.end(), cumulative_.begin());
  Fnv1a h;
  const uint64_t base_digest = base_->Digest();
  h.Mix(&base_digest, sizeof(base_digest));
  h.Mix(weights_.data(), weights_.size() * sizeof(double));
  h.Mix(&replacement_, sizeof(replacement_));
  digest_ = h.value();
}

std::vector<int64_t> WeightedSource::EpochOrder(bool, uint64_t seed, int64_t epoch, int) const {
  SampleRng rng(seed, static_cast<uint64_t>(epoch), 0, kWeightStream);
  const int64_t n = size();
  std::vector<int64_t> order(static_cast<size_t>(n));
  if (replacement_) {  // each position: the first index whose running sum passes u * total
    const double total = cumulative_.back();
    for (int64_t p = 0; p < n; ++p) {
      const double u = rng.Uniform(0.0, total);
      const auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), u);
      order[static_cast<size_t>(p)] = std::min<int64_t>(it - cumulative_.begin(), n - 1);
    }
    return order;
  }
  // Without replacement: the samples by descending key log(u) / w (Efraimidis and Spirakis), the
  // order in which weighted draws without replacement would pick them.
  std::vector<double> key(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const double u = 1.0 - rng.Uniform(0.0, 1.0);  // (0, 1]
    key[static_cast<size_t>(i)] = std::log(u) / weights_[static_cast<size_t>(i)];
  }
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&key](int64_t a, int64_t b) { return key[static_cast<size_t>(a)] > key[static_cast<size_t>(b)]; });
  return order;
}

}  // namespace sluice
