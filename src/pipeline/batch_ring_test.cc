// BatchRing with a BatchWork of its own (batches whose samples "fail" where the test says, done
// on a thread when the test releases them): the prefetch window, the order of hand-out, on_error,
// admission, and the labels, indices and padding of what it hands out.
#include "pipeline/batch_ring.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>

namespace sluice {
namespace {

class TestWork : public BatchWork {
 public:
  std::shared_ptr<RingBatch> NewBatch() override { return std::make_shared<RingBatch>(); }
  void Start(const std::shared_ptr<RingBatch>& b) override {
    started.push_back(b->index);
    for (size_t i = 0; i < b->samples.size(); ++i)
      if (bad.count(b->samples[i])) b->status[i] = CorruptData("f", b->samples[i], ": bad");
    threads.emplace_back([this, b] { MarkDone(*b); });
  }
  bool Admit(const std::deque<std::shared_ptr<RingBatch>>& in_flight) override {
    return static_cast<int>(in_flight.size()) < admit_at_most;
  }
  void Assemble(RingBatch&, const std::vector<int>& kept, Batch* out) override {
    out->images = Tensor::Empty({static_cast<int64_t>(kept.size())}, DType::kUInt8);
  }
  std::string Describe(const RingBatch&) const override { return ""; }
  void FillStats(LoaderStats*) const override {}
  ~TestWork() override {
    for (auto& t : threads) t.join();
  }

  std::set<int64_t> bad;  // dataset indices whose samples fail
  int admit_at_most = 100;
  std::vector<int64_t> started;
  std::vector<std::thread> threads;
};

struct Fixture {
  Fixture(OnError on_error, int prefetch) {
    std::vector<Sample> samples;
    for (int i = 0; i < 10; ++i) samples.push_back(Sample{std::string("f").append(std::to_string(i)), 100 + i});
    source = *Source::FromList(samples);
    options.batch_size = 4;
    options.on_error = on_error;
    options.prefetch = prefetch;
    options.num_threads = options.io_threads = 1;
    ShardOptions shard{10, false, 0, 4, LastBatch::kPad, 0, 1, {}};
    schedule = std::make_shared<const EpochSchedule>(*EpochSchedule::Create(shard, 0));
  }
  std::shared_ptr<const Source> source;
  LoaderOptions options;
  std::shared_ptr<const EpochSchedule> schedule;
  TestWork work;
};

TEST(BatchRingTest, HandsOutInOrderWithLabelsIndicesAndPadding) {
  Fixture f(OnError::kRaise, 2);
  BatchRing ring(*f.source, f.options, &f.work);
  ring.StartEpoch(f.schedule, 0);
  EXPECT_EQ(f.work.started, (std::vector<int64_t>{0, 1}));  // the prefetch window
  std::vector<int64_t> seen;
  for (int b = 0; b < 3; ++b) {
    Result<std::optional<Batch>> batch = ring.Next();
    ASSERT_TRUE(batch.ok() && batch->has_value());
    const Batch& out = **batch;
    EXPECT_EQ(out.index, b);
    for (size_t k = 0; k < out.indices.size(); ++k) {
      EXPECT_EQ(out.labels.data_as<int64_t>()[k], 100 + out.indices[k]);
      if (!out.padding[k]) seen.push_back(out.indices[k]);
    }
  }
  EXPECT_EQ(seen, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_FALSE(ring.Next()->has_value());
  EXPECT_EQ(ring.Stats().batches, 3);
}

TEST(BatchRingTest, RaiseReturnsTheFirstErrorThenGoesOn) {
  Fixture f(OnError::kRaise, 2);
  f.work.bad = {5, 6};
  BatchRing ring(*f.source, f.options, &f.work);
  ring.StartEpoch(f.schedule, 0);
  EXPECT_TRUE(ring.Next().ok());
  Result<std::optional<Batch>> failed = ring.Next();
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().message(), "f5: bad");
  EXPECT_TRUE(ring.Next().ok());  // the batch after it
}

TEST(BatchRingTest, SkipLeavesOutAndLogsTheFailedSamples) {
  Fixture f(OnError::kSkip, 1);
  f.work.bad = {1, 2};
  BatchRing ring(*f.source, f.options, &f.work);
  ring.StartEpoch(f.schedule, 0);
  Result<std::optional<Batch>> b = ring.Next();
  ASSERT_TRUE(b.ok());
  EXPECT_EQ((*b)->indices, (std::vector<int64_t>{0, 3}));
  EXPECT_EQ((*b)->images.shape()[0], 2);
  const LoaderStats s = ring.Stats();
  EXPECT_EQ(s.skipped_count, 2);
  EXPECT_EQ(s.skipped[0].path, "f1");
  EXPECT_EQ(s.skipped[0].reason, "bad");
}

TEST(BatchRingTest, AdmissionHoldsBatchesBack) {
  Fixture f(OnError::kRaise, 3);
  f.work.admit_at_most = 1;  // only one beside nothing: one at a time
  BatchRing ring(*f.source, f.options, &f.work);
  ring.StartEpoch(f.schedule, 0);
  EXPECT_EQ(f.work.started, (std::vector<int64_t>{0}));
  ASSERT_TRUE(ring.Next().ok());
  EXPECT_EQ(f.work.started, (std::vector<int64_t>{0, 1}));
}

}  // namespace
}  // namespace sluice
