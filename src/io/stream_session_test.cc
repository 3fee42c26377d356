#include "io/stream_session.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "io/epoch_schedule.h"
#include "io/tar_source.h"
#include "io/tar_test_util.h"

namespace sluice {
namespace {
using namespace sluice::testing;  // NOLINT: test helpers

ByteAllocator Heap() {
  return [](size_t n) { return std::shared_ptr<uint8_t>(new uint8_t[n], std::default_delete<uint8_t[]>()); };
}

// Polls `done` every 5 ms for up to 10 s (threads may start late under a sanitizer on 2 cores).
template <class F>
bool Within10s(F done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

std::string Text(const Result<SampleBytes>& b) {
  if (b.ok()) return std::string(reinterpret_cast<const char*>(b->data), b->size);
  std::string out = "<";
  out.append(b.status().ToString()).append(">");
  return out;
}

class StreamSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("sluice_stream_session_" + std::to_string(getpid()) + "_" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Shard s holds samples "s-k" (k < sizes[s]), each image's bytes its own name, label 10*s + k.
  std::vector<std::string> Shards(const std::vector<int>& sizes) {
    std::vector<std::string> paths;
    for (size_t s = 0; s < sizes.size(); ++s) {
      std::vector<uint8_t> tar;
      for (int k = 0; k < sizes[s]; ++k) {
        std::string key = std::to_string(s);
        key.append("-").append(std::to_string(k));
        Member(&tar, key + ".jpg", std::string("image ").append(key));
        Member(&tar, key + ".cls", std::to_string(10 * s + static_cast<size_t>(k)));
      }
      End(&tar);
      paths.push_back(Write(std::string("s").append(std::to_string(s)).append(".tar"), tar));
    }
    return paths;
  }
  std::string Write(const std::string& name, const std::vector<uint8_t>& bytes) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                static_cast<std::streamsize>(bytes.size()));
    return path;
  }
  static std::shared_ptr<const StreamSource> Source(const std::vector<std::string>& urls, std::vector<int64_t> counts = {},
                                                    int lanes = 2, int64_t window = 3) {
    StreamSource::Options o;
    o.layout = {lanes, window};
    auto src = StreamSource::Create(urls, std::move(counts), o);
    EXPECT_TRUE(src.ok()) << src.status().ToString();
    return src.ok() ? *src : nullptr;
  }
  // The indices rank `rank` of `world` reads in epoch `epoch`, in order.
  static std::vector<int64_t> Wanted(const StreamSource& src, int rank, int world, LastBatch policy = LastBatch::kPad) {
    ShardOptions o{src.size(), true, 3, 4, policy, rank, world,
                   [&src](bool sh, uint64_t seed, int64_t e, int w) { return src.EpochOrder(sh, seed, e, w); }};
    auto s = EpochSchedule::Create(o, 2);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s->IndicesFrom(0);
  }
  // What a loader of batch 4 with last_batch "partial" (one rank) reads in epoch `epoch`, in order.
  static std::vector<int64_t> EpochPlan(const StreamSource& src, int64_t epoch) {
    ShardOptions o{src.size(), true, 3, 4, LastBatch::kPartial, 0, 1,
                   [&src](bool sh, uint64_t seed, int64_t e, int w) { return src.EpochOrder(sh, seed, e, w); }};
    return EpochSchedule::Create(o, epoch)->IndicesFrom(0);
  }
  std::filesystem::path dir_;
};

// Every rank's reads, in its order, give what the indexed source reads by offset, with the
// labels the shards hold; padding repeats are read again.
TEST_F(StreamSessionTest, ReadsGiveWhatTheIndexedSourceReads) {
  const std::vector<std::string> urls = Shards({5, 3, 7, 4});
  auto indexed = TarSource::Create(urls, WebDatasetSpec{});
  ASSERT_TRUE(indexed.ok());
  auto src = Source(urls);
  ASSERT_EQ(src->size(), 19);
  for (int world : {1, 2, 3}) {
    for (int rank = 0; rank < world; ++rank) {
      StreamSession session(src, 8, 1 << 20);
      const std::vector<int64_t> wanted = Wanted(*src, rank, world);
      session.Plan(wanted, 0);
      for (int64_t i : wanted) {
        EXPECT_EQ(Text(session.Read(i, Heap(), 1 << 20)), Text((*indexed)->Read(i, Heap(), 1 << 20))) << i;
        EXPECT_EQ(session.label(i), (*indexed)->label(i));
      }
      EXPECT_GT(session.counters().shards, 0);
      EXPECT_EQ(session.counters().held_bytes, 0);
    }
  }
}

// The buffers that hold a sample from its stream until its Read go back to the session's pool
// once read: none stays in use after an epoch, and the idle ones are no more than were in use at
// once (reused, not piled up epoch after epoch).
TEST_F(StreamSessionTest, SampleBuffersGoBackOnceReadAndAreReused) {
  const std::vector<std::string> urls = Shards({20, 20, 20});
  auto indexed = TarSource::Create(urls, WebDatasetSpec{});
  ASSERT_TRUE(indexed.ok());
  auto src = Source(urls, {}, 2, 4);
  StreamSession session(src, 6, 1 << 20);
  for (int epoch = 0; epoch < 3; ++epoch) {
    const std::vector<int64_t> wanted = Wanted(*src, 0, 1);
    session.Plan(wanted, 0);
    for (int64_t i : wanted) ASSERT_EQ(Text(session.Read(i, Heap(), 100)), Text((*indexed)->Read(i, Heap(), 100)));
    session.Stop();  // no stream keeps a buffer for a next epoch
    const HostPool::Usage u = session.buffer_usage();
    EXPECT_EQ(u.in_use_bytes, 0) << "epoch " << epoch;
    EXPECT_GT(u.cached_bytes, 0) << "epoch " << epoch;
    EXPECT_LE(u.cached_bytes, u.peak_bytes) << "epoch " << epoch;
  }
}

// The next epoch announced ahead: its streams start as the current epoch ends, and a Plan that
// matches carries them on; one that does not starts afresh. Either way the reads are right.
TEST_F(StreamSessionTest, TheNextEpochStartsAheadAndIsCarriedOn) {
  const std::vector<std::string> urls = Shards({6, 6, 6});
  auto indexed = TarSource::Create(urls, WebDatasetSpec{});
  ASSERT_TRUE(indexed.ok());
  auto src = Source(urls, {}, 2, 4);
  auto plan = [&](int64_t epoch) { return EpochPlan(*src, epoch); };
  StreamSession session(src, 6, 1 << 20);
  session.Plan(plan(0), 0);
  session.PlanNext(plan(1), 1);
  for (int64_t i : plan(0)) ASSERT_EQ(Text(session.Read(i, Heap(), 100)), Text((*indexed)->Read(i, Heap(), 100)));
  EXPECT_TRUE(Within10s([&] { return session.counters().held_bytes > 0; }))
      << "epoch 1's first samples are held before it starts";
  session.Retire();
  session.Plan(plan(1), 1);  // the announced one: carried on
  session.PlanNext(plan(2), 2);
  for (int64_t i : plan(1)) ASSERT_EQ(Text(session.Read(i, Heap(), 100)), Text((*indexed)->Read(i, Heap(), 100)));
  session.Retire();
  const std::vector<int64_t> other = plan(7);  // not the announced one: a fresh start
  session.Plan(other, 7);
  for (int64_t i : other) ASSERT_EQ(Text(session.Read(i, Heap(), 100)), Text((*indexed)->Read(i, Heap(), 100)));
  // Retired mid-epoch: a waiting read ends at once.
  session.Retire();
  EXPECT_EQ(session.Read(other[0], Heap(), 100).status().code(), StatusCode::kCancelled);
}

// The loader reads the next epoch's first batches while this one's last are still read: those
// reads (ReadIn with the next epoch) take their samples from the announced plan, which a Plan
// for that epoch then carries on with them taken. A read for an epoch neither current nor
// announced, or for an announced plan retired with it, is cancelled.
TEST_F(StreamSessionTest, ReadsAheadIntoTheAnnouncedEpochAreCarriedOn) {
  const std::vector<std::string> urls = Shards({6, 6, 6});
  auto indexed = TarSource::Create(urls, WebDatasetSpec{});
  ASSERT_TRUE(indexed.ok());
  auto src = Source(urls, {}, 2, 4);
  auto plan = [&](int64_t epoch) { return EpochPlan(*src, epoch); };
  const std::vector<int64_t> p0 = plan(0), p1 = plan(1);
  ASSERT_EQ(p1.size(), 18u);
  StreamSession session(src, 12, 1 << 20);
  session.Plan(p0, 0);
  session.PlanNext(p1, 1);
  auto expect = [&](int64_t epoch, int64_t i) {
    EXPECT_EQ(Text(session.ReadIn(epoch, i, Heap(), 100)), Text((*indexed)->Read(i, Heap(), 100)))
        << "epoch " << epoch << ", index " << i;
  };
  for (size_t k = 0; k + 3 < p0.size(); ++k) expect(0, p0[k]);
  for (size_t k = 0; k < 3; ++k) expect(1, p1[k]);  // ahead, epoch 0's last three not yet read
  for (size_t k = p0.size() - 3; k < p0.size(); ++k) expect(0, p0[k]);
  EXPECT_EQ(session.ReadIn(5, p0[0], Heap(), 100).status().code(), StatusCode::kCancelled);
  session.Retire();
  session.Plan(p1, 1);  // carried on, with the three read ahead taken
  for (size_t k = 3; k < p1.size(); ++k) expect(1, p1[k]);
  EXPECT_EQ(session.ReadIn(1, p1[0], Heap(), 100).status().code(), StatusCode::kFailedPrecondition)
      << "the read ahead took its slot in the plan carried on: one more is one too many";
  session.PlanNext(plan(2), 2);
  session.Retire(/*announced_too=*/true);
  EXPECT_EQ(session.ReadIn(2, plan(2)[0], Heap(), 100).status().code(), StatusCode::kCancelled);
}

// Reads may come from several threads and out of order, within the lookahead.
TEST_F(StreamSessionTest, ConcurrentReadsOutOfOrder) {
  auto src = Source(Shards({30, 20, 25}), {}, 3, 10);
  const std::vector<int64_t> wanted = Wanted(*src, 0, 1);
  StreamSession session(src, 12, 1 << 20);
  for (int round = 0; round < 3; ++round) {
    session.Plan(wanted, 0);
    std::vector<std::string> got(wanted.size());
    std::vector<std::thread> readers;
    for (int t = 0; t < 4; ++t)
      readers.emplace_back([&, t] {
        for (size_t q = static_cast<size_t>(t); q < wanted.size(); q += 4) got[q] = Text(session.Read(wanted[q], Heap(), 100));
      });
    for (std::thread& r : readers) r.join();
    for (size_t q = 0; q < wanted.size(); ++q) {
      const auto [shard, k] = src->Locate(wanted[q]);
      EXPECT_EQ(got[q], "image " + std::to_string(shard) + "-" + std::to_string(k));
    }
  }
}

// Streams that reached the lookahead wake when the frontier has moved an eighth of it, not at
// every Read: each Read waking every stream thread (2 x lanes) cost 35 context switches an image
// with 16 lanes in a loader. Counted here: the process's voluntary context switches.
TEST_F(StreamSessionTest, StreamsAtTheLookaheadDoNotWakeAtEveryRead) {
  const int lanes = 16;
  auto src = Source(Shards(std::vector<int>(16, 64)), {}, lanes, 4);
  const std::vector<int64_t> wanted = Wanted(*src, 0, 1);
  StreamSession session(src, 64, 1 << 20);
  session.Plan(wanted, 0);
  int64_t held = -1;  // the streams reach the lookahead: what they hold stops growing
  ASSERT_TRUE(Within10s([&] {
    const int64_t now = session.counters().held_bytes;
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    return std::exchange(held, now) == now && now > 0;
  }));
  rusage before{}, after{};
  getrusage(RUSAGE_SELF, &before);
  for (int64_t index : wanted) {
    ASSERT_TRUE(session.Read(index, Heap(), 100).ok());
    if (index % 8 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));  // a reader's pace
  }
  getrusage(RUSAGE_SELF, &after);
  const double per_read = static_cast<double>(after.ru_nvcsw - before.ru_nvcsw) / static_cast<double>(wanted.size());
  EXPECT_LT(per_read, 8.0) << "voluntary context switches per Read";
}

// Held samples stay within the lookahead: a reader that stops leaves the streams waiting.
TEST_F(StreamSessionTest, StreamsWaitForTheReaderAndStopWakesEveryone) {
  auto src = Source(Shards({40, 40}), {}, 2, 4);
  const std::vector<int64_t> wanted = Wanted(*src, 0, 1);
  StreamSession session(src, 6, 1 << 20);
  session.Plan(wanted, 0);
  for (size_t q = 0; q < 5; ++q) ASSERT_TRUE(session.Read(wanted[q], Heap(), 100).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const int64_t sample = static_cast<int64_t>(std::string("image 0-00").size());
  EXPECT_LE(session.counters().held_bytes, 8 * sample) << "at most lookahead + lanes samples held";
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    session.Stop();
  });
  // Index 79's sample is planned last: this Read waits until Stop.
  Result<SampleBytes> late = session.Read(wanted.back(), Heap(), 100);
  stopper.join();
  EXPECT_EQ(late.status().code(), StatusCode::kCancelled);
  EXPECT_EQ(session.Read(wanted[5], Heap(), 100).status().code(), StatusCode::kCancelled);
}

// Damage and missing shards fail the samples still wanted, each naming the shard; counts from a
// manifest that a shard does not hold fail the missing samples.
TEST_F(StreamSessionTest, BadShardsFailTheirSamplesNamingThem) {
  std::vector<std::string> urls = Shards({3, 3, 3});
  std::vector<uint8_t> cut;
  Member(&cut, "0.jpg", "image c-0");
  Member(&cut, "0.cls", "1");
  Member(&cut, "1.jpg", std::string(2000, 'x'));
  cut.resize(cut.size() - 1000);  // the second image is cut short
  urls.push_back(Write("cut.tar", cut));
  urls.push_back((dir_ / "missing.tar").string());
  auto src = Source(urls, {3, 3, 4, 2, 2});  // shard 2 holds 3, not 4
  StreamSession session(src, 100, 1 << 20);
  std::vector<int64_t> all(static_cast<size_t>(src->size()));
  std::iota(all.begin(), all.end(), 0);
  session.Plan(all, 0);
  for (int64_t i = 0; i < 9; ++i) EXPECT_TRUE(session.Read(i, Heap(), 1 << 20).ok()) << i;
  Result<SampleBytes> extra = session.Read(9, Heap(), 1 << 20);
  EXPECT_EQ(extra.status().code(), StatusCode::kCorruptData);
  EXPECT_NE(extra.status().message().find("s2.tar: the shard ends after 3 samples; 4 were expected"), std::string::npos)
      << extra.status().message();
  EXPECT_EQ(Text(session.Read(10, Heap(), 1 << 20)), "image c-0");
  Result<SampleBytes> damaged = session.Read(11, Heap(), 1 << 20);
  EXPECT_EQ(damaged.status().code(), StatusCode::kCorruptData);
  EXPECT_NE(damaged.status().message().find("cut.tar"), std::string::npos) << damaged.status().message();
  for (int64_t i : {12, 13}) {
    Result<SampleBytes> missing = session.Read(i, Heap(), 1 << 20);
    EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
    EXPECT_NE(missing.status().message().find("missing.tar"), std::string::npos) << missing.status().message();
  }
  EXPECT_EQ(session.Read(0, Heap(), 1 << 20).status().code(), StatusCode::kFailedPrecondition) << "read twice";
}

TEST_F(StreamSessionTest, ASampleOverTheSizeLimitIsRefusedNamingIt) {
  auto src = Source(Shards({2}));
  StreamSession session(src, 10, 9);  // "image 0-0" is 9 bytes: fits; the limit per Read is lower
  session.Plan({0, 1}, 0);
  Result<SampleBytes> r = session.Read(0, Heap(), 5);
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(r.status().message().find("s0.tar:0-0.jpg"), std::string::npos) << r.status().message();
  EXPECT_EQ(Text(session.Read(1, Heap(), 100)), "image 0-1");
}

TEST(StreamSourceTest, ClearErrors) {
  StreamSource::Options o;
  EXPECT_EQ(StreamSource::Create({}, {}, o).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(StreamSource::Create({"a.tar"}, {1, 2}, o).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(StreamSource::Create({"a.tar"}, {0}, o).status().code(), StatusCode::kInvalidArgument);
  auto missing = StreamSource::Create({"/nonexistent/a.tar"}, {}, o);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  o.layout.window = 0;
  EXPECT_EQ(StreamSource::Create({"a.tar"}, {1}, o).status().code(), StatusCode::kInvalidArgument);
  auto counted = StreamSource::Create({"http://h/a.tar", "http://h/b.tar"}, {2, 3}, StreamSource::Options{});
  ASSERT_TRUE(counted.ok());
  EXPECT_EQ((*counted)->size(), 5);
  EXPECT_EQ((*counted)->name(3), "http://h/b.tar#1");
  EXPECT_EQ((*counted)->label(3), -1);
  EXPECT_EQ((*counted)->Read(0, Heap(), 10).status().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace sluice
