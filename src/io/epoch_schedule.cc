#include "io/epoch_schedule.h"

#include <algorithm>
#include <numeric>

#include "io/sampler.h"

namespace sluice {

Result<EpochSchedule> EpochSchedule::Create(const ShardOptions& o, int64_t epoch,
                                            std::vector<uint8_t> consumed) {
  if (o.world_size < 1) return InvalidArgument("world_size must be at least 1, got ", o.world_size);
  if (o.rank < 0 || o.rank >= o.world_size)
    return InvalidArgument("rank must be in [0, world_size) = [0, ", o.world_size, "), got ", o.rank);
  if (o.batch_size < 1) return InvalidArgument("batch_size must be at least 1, got ", o.batch_size);
  if (!consumed.empty() && static_cast<int64_t>(consumed.size()) != o.num_samples)
    return InvalidArgument("the resume state covers ", consumed.size(), " samples, the dataset has ",
                           o.num_samples);
  EpochSchedule s;
  s.o_ = o;
  s.epoch_ = epoch;
  std::vector<int64_t> order;
  if (o.order) {
    order = o.order(o.shuffle, o.seed, epoch, o.world_size);
    if (static_cast<int64_t>(order.size()) != o.num_samples)
      return Internal("the source's epoch order has ", order.size(), " positions, not ", o.num_samples);
  } else if (o.shuffle) {
    order = Sampler::Permutation(o.num_samples, o.seed, epoch);
  } else {
    order.resize(static_cast<size_t>(o.num_samples));
    std::iota(order.begin(), order.end(), int64_t{0});
  }
  s.order_ = std::make_shared<const std::vector<int64_t>>(std::move(order));
  std::vector<int64_t> remaining;
  remaining.reserve(static_cast<size_t>(o.num_samples));
  for (int64_t p = 0; p < o.num_samples; ++p)
    if (consumed.empty() || consumed[static_cast<size_t>(p)] == 0) remaining.push_back(p);
  s.remaining_ = std::make_shared<const std::vector<int64_t>>(std::move(remaining));
  s.resumed_ = !consumed.empty();
  s.consumed_ = consumed.empty() ? std::vector<uint8_t>(static_cast<size_t>(o.num_samples), 0)
                                 : std::move(consumed);

  const int64_t m = static_cast<int64_t>(s.remaining_->size()), w = o.world_size, bs = o.batch_size;
  if (m == 0) return s;  // a resumed epoch with nothing left
  const int64_t part_min = m / w, part_max = (m + w - 1) / w;
  switch (o.last_batch) {
    case LastBatch::kDrop:
      s.num_batches_ = part_min / bs;
      if (s.num_batches_ == 0 && m == o.num_samples)  // a whole epoch, not the end of a resumed one
        return InvalidArgument("last_batch='drop': ", m, " samples over ", w, " rank(s) with batch_size ",
                               bs, " leaves no full batch for every rank (nothing to yield)");
      break;
    case LastBatch::kPad:
      s.num_batches_ = (part_max + bs - 1) / bs;
      break;
    case LastBatch::kPartial:
      s.num_batches_ = (part_max + bs - 1) / bs;
      if (part_min < s.num_batches_)
        return InvalidArgument("last_batch='partial': ", m, " samples cannot give each of ", w,
                               " ranks ", s.num_batches_, " batch(es); use last_batch='pad' or fewer ranks");
      break;
  }
  return s;
}

int64_t EpochSchedule::PartSize(int r) const {
  const int64_t m = static_cast<int64_t>(remaining_->size());
  return r < m ? (m - r + o_.world_size - 1) / o_.world_size : 0;
}

int64_t EpochSchedule::PartPosition(int r, int64_t j) const {
  const int64_t m = static_cast<int64_t>(remaining_->size());
  const int64_t k = r + j * o_.world_size;
  if (k < m) return (*remaining_)[static_cast<size_t>(k)];
  // Padding: the global order again from its start, counted as if the consumed positions came
  // first, so that a resumed epoch pads exactly as the uninterrupted one would have.
  return (o_.num_samples - m + k) % o_.num_samples;
}

int64_t EpochSchedule::BatchStart(int r, int64_t b) const {
  const int64_t bs = o_.batch_size;
  if (o_.last_batch != LastBatch::kPartial) return b * bs;
  // Leave at least one sample for each of the batches after b.
  return std::min(b * bs, PartSize(r) - (num_batches_ - b));
}

void EpochSchedule::Batch(int64_t b, std::vector<int64_t>* indices, std::vector<uint8_t>* pad) const {
  indices->clear();
  pad->clear();
  const int r = o_.rank;
  const int64_t begin = BatchStart(r, b);
  const int64_t end = b + 1 == num_batches_ && o_.last_batch == LastBatch::kPartial ? PartSize(r)
                                                                                      : BatchStart(r, b + 1);
  const int64_t size = PartSize(r);
  for (int64_t j = begin; j < end; ++j) {
    indices->push_back((*order_)[static_cast<size_t>(PartPosition(r, j))]);
    pad->push_back(j >= size ? 1 : 0);
  }
}

std::vector<uint8_t> EpochSchedule::ConsumedAfter(int64_t batches) const {
  std::vector<uint8_t> out = consumed_;
  const int64_t done = std::min(batches, num_batches_);
  for (int r = 0; r < o_.world_size; ++r) {
    const int64_t end = std::min(done == num_batches_ && o_.last_batch == LastBatch::kPartial
                                     ? PartSize(r)
                                     : BatchStart(r, done),
                                 PartSize(r));
    for (int64_t j = 0; j < end; ++j) out[static_cast<size_t>(PartPosition(r, j))] = 1;
  }
  return out;
}

std::vector<int64_t> EpochSchedule::IndicesFrom(int64_t first) const {
  std::vector<int64_t> out, batch;
  std::vector<uint8_t> pad;
  for (int64_t b = first; b < num_batches_; ++b) {
    Batch(b, &batch, &pad);
    out.insert(out.end(), batch.begin(), batch.end());
  }
  return out;
}

}  // namespace sluice
