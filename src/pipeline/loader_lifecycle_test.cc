// Lifecycle and concurrency of sluice::Loader (include/sluice/loader.h): calls from several
// threads, Close() while another thread waits, a bounded Next(), a forked child. The samples are
// real JPEGs (EncodeJpeg) served by a source whose reads can be held at a gate, to stand for a
// read that does not come back.
#include "sluice/loader.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <future>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "codec/jpeg_cpu.h"

namespace sluice {
namespace {

namespace T = sluice::transforms;
using std::chrono::milliseconds;

// `n` copies of one small JPEG; Read() waits while the gate is closed.
class GatedSource : public Source {
 public:
  GatedSource(int n, bool open) : n_(n), open_(open) {
    std::vector<uint8_t> px(32 * 24 * 3);
    for (size_t i = 0; i < px.size(); ++i) px[i] = static_cast<uint8_t>(i * 7);
    jpeg_ = *EncodeJpeg(ImageView{px.data(), 24, 32, 3, 32 * 3}, 90, "444", false, 1);
  }
  int64_t size() const override { return n_; }
  int64_t label(int64_t index) const override { return index; }
  std::string name(int64_t index) const override { return "gated/" + std::to_string(index) + ".jpg"; }
  uint64_t Digest() const override { return static_cast<uint64_t>(n_); }
  Result<SampleBytes> Read(int64_t, const ByteAllocator& memory, int64_t) const override {
    {
      std::unique_lock<std::mutex> lock(mu_);
      ++reads_waiting_;
      cv_.wait(lock, [this] { return open_; });
      --reads_waiting_;
    }
    std::shared_ptr<uint8_t> buf = memory(jpeg_.size());
    std::memcpy(buf.get(), jpeg_.data(), jpeg_.size());
    const uint8_t* data = buf.get();
    return SampleBytes{std::move(buf), data, jpeg_.size()};
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  int reads_waiting() const {
    std::lock_guard<std::mutex> lock(mu_);
    return reads_waiting_;
  }

 private:
  int n_;
  std::vector<uint8_t> jpeg_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  mutable int reads_waiting_ = 0;
  bool open_;
};

std::unique_ptr<Loader> Make(std::shared_ptr<const Source> source, int batch_size) {
  LoaderOptions o;
  o.batch_size = batch_size;
  o.num_threads = 2;
  o.io_threads = 1;
  o.prefetch = 2;
  Result<std::unique_ptr<Loader>> l = Loader::Create(std::move(source), {T::CenterCrop{16, 16}}, o);
  EXPECT_TRUE(l.ok()) << l.status().ToString();
  return l.ok() ? std::move(*l) : nullptr;
}

TEST(LoaderLifecycleTest, BoundedNextTakesNothingUntilTheBatchIsReady) {
  auto source = std::make_shared<GatedSource>(8, false);
  std::unique_ptr<Loader> loader = Make(source, 4);
  ASSERT_TRUE(loader->StartEpoch(0).ok());
  Result<std::optional<Batch>> b = loader->Next(milliseconds(30));
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(loader->State().batches, 0);
  source->Open();
  for (int i = 0; i < 2; ++i) {
    do b = loader->Next(milliseconds(30));
    while (!b.ok() && b.status().code() == StatusCode::kDeadlineExceeded);
    ASSERT_TRUE(b.ok() && b->has_value()) << b.status().ToString();
    EXPECT_EQ((*b)->index, i);
    EXPECT_EQ(loader->State().batches, i + 1);
  }
  b = loader->Next(milliseconds(30));
  ASSERT_TRUE(b.ok());
  EXPECT_FALSE(b->has_value());
}

// A read that does not come back: Close() from another thread ends the Next() waiting for it at
// once; the threads are joined when the read returns.
TEST(LoaderLifecycleTest, CloseFromAnotherThreadEndsAWaitingNext) {
  auto source = std::make_shared<GatedSource>(8, false);
  std::unique_ptr<Loader> loader = Make(source, 4);
  ASSERT_TRUE(loader->StartEpoch(0).ok());
  auto next = std::async(std::launch::async, [&] { return loader->Next(); });
  while (source->reads_waiting() == 0) std::this_thread::sleep_for(milliseconds(1));
  auto close = std::async(std::launch::async, [&] { loader->Close(); });
  ASSERT_EQ(next.wait_for(std::chrono::seconds(10)), std::future_status::ready) << "Next() still waits";
  Result<std::optional<Batch>> b = next.get();
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(b.status().message(), "the loader is closed");
  EXPECT_EQ(close.wait_for(milliseconds(50)), std::future_status::timeout);  // the read holds a thread
  source->Open();
  ASSERT_EQ(close.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(loader->StartEpoch(1).code(), StatusCode::kFailedPrecondition);
  loader->Close();  // twice is fine
}

TEST(LoaderLifecycleTest, ThreadsTakingBatchesGetEachOnce) {
  constexpr int kBatches = 40;
  auto source = std::make_shared<GatedSource>(kBatches * 2, true);
  std::unique_ptr<Loader> loader = Make(source, 2);
  for (int epoch = 0; epoch < 3; ++epoch) {
    ASSERT_TRUE(loader->StartEpoch(epoch).ok());
    std::mutex mu;
    std::multiset<int64_t> seen;
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        for (;;) {
          Result<std::optional<Batch>> b = t % 2 ? loader->Next() : loader->Next(milliseconds(1));
          if (!b.ok() && b.status().code() == StatusCode::kDeadlineExceeded) continue;
          ASSERT_TRUE(b.ok()) << b.status().ToString();
          if (!b->has_value()) return;
          std::lock_guard<std::mutex> lock(mu);
          seen.insert((*b)->indices.begin(), (*b)->indices.end());
        }
      });
    // Meanwhile, from here: stats and state.
    for (int i = 0; i < 20; ++i) {
      EXPECT_LE(loader->stats().batches, (epoch + 1) * kBatches);
      EXPECT_LE(loader->State().batches, kBatches);
    }
    for (auto& th : threads) th.join();
    ASSERT_EQ(seen.size(), static_cast<size_t>(kBatches * 2));
    for (int64_t i = 0; i < kBatches * 2; ++i) EXPECT_EQ(seen.count(i), 1u) << i;
    EXPECT_EQ(loader->State().batches, kBatches);
  }
}

// Starting epochs and closing from other threads while batches are taken: no crash, no hang, and
// the takers only see batches, the end of an epoch, or "closed".
TEST(LoaderLifecycleTest, StartAndCloseRaceWithTakers) {
  for (int round = 0; round < 20; ++round) {
    auto source = std::make_shared<GatedSource>(64, true);
    std::unique_ptr<Loader> loader = Make(source, 4);
    ASSERT_TRUE(loader->StartEpoch(0).ok());
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t)
      threads.emplace_back([&] {
        while (!stop.load()) {
          Result<std::optional<Batch>> b = loader->Next();
          if (!b.ok()) {
            EXPECT_EQ(b.status().code(), StatusCode::kFailedPrecondition) << b.status().ToString();
            return;
          }
        }
      });
    threads.emplace_back([&] {
      for (int e = 1; e < 4 && !stop.load(); ++e) {
        const Status s = loader->StartEpoch(e);
        if (!s.ok()) {
          EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
        }
      }
    });
    std::this_thread::sleep_for(milliseconds(round % 5));
    loader->Close();
    stop.store(true);
    for (auto& th : threads) th.join();
  }
}

// The loader's threads stay in the parent: a forked child gets an error from every call, and its
// copy of the loader is destroyed without waiting for threads that are not there.
TEST(LoaderLifecycleTest, AForkedChildGetsAnError) {
  auto source = std::make_shared<GatedSource>(16, true);
  std::unique_ptr<Loader> loader = Make(source, 4);
  ASSERT_TRUE(loader->StartEpoch(0).ok());
  ASSERT_TRUE(loader->Next().ok());
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(20);  // a hang fails the test instead of blocking it
    const Status s = loader->StartEpoch(1);
    Result<std::optional<Batch>> b = loader->Next();
    const bool ok = s.code() == StatusCode::kFailedPrecondition &&
                    s.message().find("forked child") != std::string::npos && !b.ok() &&
                    b.status().code() == StatusCode::kFailedPrecondition;
    loader->Close();
    loader.reset();
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child did not exit (signal " << WTERMSIG(status) << ")";
  EXPECT_EQ(WEXITSTATUS(status), 0);
  Result<std::optional<Batch>> b = loader->Next();  // the parent goes on
  ASSERT_TRUE(b.ok() && b->has_value());
}

}  // namespace
}  // namespace sluice
