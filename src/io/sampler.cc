#include "io/sampler.h"

#include <numeric>
#include <utility>

#include "core/rng.h"

namespace sluice {

Sampler::Sampler(int64_t num_samples, bool shuffle, uint64_t seed)
    : num_samples_(num_samples), shuffle_(shuffle), seed_(seed) {}

std::vector<int64_t> Sampler::Permutation(int64_t n, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  SampleRng rng(seed, static_cast<uint64_t>(epoch), 0, kShuffleStream);
  for (int64_t i = n - 1; i > 0; --i) {
    const int64_t j = rng.RandInt(0, i + 1);
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
  }
  return order;
}

int64_t Sampler::IndexAt(int64_t epoch, int64_t position) const {
  if (!shuffle_) return position;
  std::shared_ptr<const std::vector<int64_t>> order;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (cached_epoch_ != epoch || !cached_) {
      cached_ = std::make_shared<const std::vector<int64_t>>(Permutation(num_samples_, seed_, epoch));
      cached_epoch_ = epoch;
    }
    order = cached_;
  }
  return (*order)[static_cast<size_t>(position)];
}

}  // namespace sluice
