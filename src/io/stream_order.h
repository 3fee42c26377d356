// StreamOrder: an epoch's order over shards that are read start to end (streamed), as a pure
// function of the shards' sample counts, the seed, the epoch and the world size. It is laid out
// so that the loader's usual split (rank r takes global positions r, r + W, r + 2W, ...;
// epoch_schedule.h) gives each rank a contiguous run of the epoch's stream, mixed as a stream
// reader can afford:
//
//   1. the shards in an order drawn for the epoch (as given without shuffle), their samples
//      concatenated: the epoch's stream;
//   2. rank r's part is the r-th run of that stream, as long as its share of the split;
//   3. the part is cut into `lanes` runs read side by side (one stream each), their samples
//      interleaved one by one;
//   4. with shuffle, each block of `window` consecutive samples of that sequence is permuted
//      (the buffer a rank holds: a sample moves less than `window` places).
//
//   StreamOrder({1000, 1000, 800}, {.lanes = 4, .window = 1000}, true, seed, epoch, world)
//
// Every sample appears once. A sample's dataset index is its shard's offset plus its place in
// the shard. Without shuffle the order is still laid out by rank and lane.
//
// Thread-safety: pure functions.
#ifndef SLUICE_IO_STREAM_ORDER_H_
#define SLUICE_IO_STREAM_ORDER_H_

#include <cstdint>
#include <vector>

namespace sluice {

struct StreamLayout {
  int lanes = 4;           // shards a rank reads at once
  int64_t window = 1000;   // samples permuted together (the shuffle buffer)
};

// Global position -> dataset index. REQUIRES: world_size >= 1, lanes >= 1, window >= 1.
std::vector<int64_t> StreamOrder(const std::vector<int64_t>& shard_sizes, const StreamLayout& layout, bool shuffle,
                                 uint64_t seed, int64_t epoch, int world_size);

}  // namespace sluice

#endif  // SLUICE_IO_STREAM_ORDER_H_
