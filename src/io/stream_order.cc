#include "io/stream_order.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "core/rng.h"

namespace sluice {

namespace {

// The random stream of the streamed order (apart from the sampler's kShuffleStream).
constexpr uint32_t kStreamOrderStream = kShuffleStream - 1;

template <typename T>
void Shuffle(std::vector<T>& v, size_t first, size_t last, SampleRng& rng) {
  for (size_t i = last - 1; i > first; --i) {
    const size_t j = first + static_cast<size_t>(rng.RandInt(0, static_cast<int64_t>(i - first + 1)));
    std::swap(v[i], v[j]);
  }
}

}  // namespace

std::vector<int64_t> StreamOrder(const std::vector<int64_t>& shard_sizes, const StreamLayout& layout, bool shuffle,
                                 uint64_t seed, int64_t epoch, int world_size) {
  const size_t shards = shard_sizes.size();
  std::vector<int64_t> offset(shards + 1, 0);
  for (size_t s = 0; s < shards; ++s) offset[s + 1] = offset[s] + shard_sizes[s];
  const int64_t n = offset[shards];

  // 1. The epoch's stream: shards in the epoch's order, their samples in order.
  std::vector<size_t> shard_order(shards);
  std::iota(shard_order.begin(), shard_order.end(), size_t{0});
  if (shuffle && shards > 1) {
    SampleRng rng(seed, static_cast<uint64_t>(epoch), 0, kStreamOrderStream);
    Shuffle(shard_order, 0, shards, rng);
  }
  std::vector<int64_t> stream;
  stream.reserve(static_cast<size_t>(n));
  for (size_t s : shard_order)
    for (int64_t k = offset[s]; k < offset[s + 1]; ++k) stream.push_back(k);

  std::vector<int64_t> order(static_cast<size_t>(n));
  const int64_t w = world_size;
  int64_t start = 0;  // of rank r's run in the stream
  std::vector<int64_t> part;
  for (int64_t r = 0; r < w && r < n; ++r) {
    // 2. Rank r's run: as many samples as positions r, r + W, ... below n.
    const int64_t len = (n - r + w - 1) / w;
    // 3. Its lanes (runs of nearly equal length), interleaved one sample at a time.
    const int64_t lanes = std::clamp<int64_t>(layout.lanes, 1, std::max<int64_t>(len, 1));
    part.clear();
    std::vector<int64_t> at(static_cast<size_t>(lanes)), end(static_cast<size_t>(lanes));
    for (int64_t l = 0; l < lanes; ++l) {
      at[static_cast<size_t>(l)] = start + len * l / lanes;
      end[static_cast<size_t>(l)] = start + len * (l + 1) / lanes;
    }
    while (static_cast<int64_t>(part.size()) < len)
      for (int64_t l = 0; l < lanes; ++l)
        if (at[static_cast<size_t>(l)] < end[static_cast<size_t>(l)])
          part.push_back(stream[static_cast<size_t>(at[static_cast<size_t>(l)]++)]);
    // 4. Each window permuted, keyed by where it starts in the epoch's stream.
    if (shuffle)
      for (int64_t b = 0; b < len; b += layout.window) {
        SampleRng rng(seed, static_cast<uint64_t>(epoch), static_cast<uint64_t>(1 + start + b), kStreamOrderStream);
        Shuffle(part, static_cast<size_t>(b), static_cast<size_t>(std::min(len, b + layout.window)), rng);
      }
    for (int64_t j = 0; j < len; ++j) order[static_cast<size_t>(r + j * w)] = part[static_cast<size_t>(j)];
    start += len;
  }
  return order;
}

}  // namespace sluice
