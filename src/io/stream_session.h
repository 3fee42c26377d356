// StreamSession: one loader's reading of a StreamSource. As each epoch starts, the loader tells
// it which samples it will read, in order (Plan); the session then streams the shards that hold
// them, on a few threads (one shard each), keeps each wanted sample from when it passes until
// the loader's Read takes it, and lets a stream run no more than `lookahead` places ahead of the
// earliest sample not yet taken (the stream waits meanwhile): host memory stays bounded by about
// `lookahead` samples whatever the dataset's size. Samples it does not want (another rank's, or
// ones taken before a resume) are passed over unread. A shard read twice in one epoch (padding)
// is streamed twice.
//
// The next epoch's reads can be announced ahead (PlanNext): its streams start within the same
// lookahead as the current epoch ends, so an epoch's first batch does not wait for the shuffle
// window to fill, and reads for it (ReadIn with its epoch: the loader's batches read ahead into
// the next epoch) are served from its plan while the current one still runs. A Plan that matches
// the announced one carries its streams and those reads on; any other stops everything and
// starts afresh.
//
//   auto session = std::make_shared<StreamSession>(source, lookahead, max_file_bytes);
//   session->Plan(schedule.IndicesFrom(0), 0);           // then ReadIn(0, i) for those, in about that order
//   session->PlanNext(next_schedule.IndicesFrom(0), 1);  // optional; then ReadIn(1, i) may start
//   session->Retire();  session->Plan(..., 1);           // the next epoch (the current one's batches cancelled)
//   session->Stop();                                     // wakes every waiting Read (Cancelled)
//
// The bytes a stream keeps live in buffers of the session's own HostPool until a Read copies
// them out: they are reused sample after sample (a fresh buffer per sample cost the kernel's
// page zeroing, about 4% of a 2-core machine's CPU on 142-KiB images), and the idle ones the next
// epoch no longer asks for are freed as it is planned.
//
// A shard that cannot be opened, is cut short or is damaged fails the samples of it still
// wanted, each with the error naming the shard (and the member where known), so the loader's
// on_error decides. label() and name() give what a sample's stream said once it has passed.
//
// Thread-safety: Read, ReadIn and the accessors from any thread. Plan and PlanNext from one
// thread, with no read of the current plan in progress (the loader retires it and cancels its
// batches first; reads of the announced plan may go on when Plan carries it on); Retire and Stop
// from any thread.
#ifndef SLUICE_IO_STREAM_SESSION_H_
#define SLUICE_IO_STREAM_SESSION_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/host_pool.h"
#include "io/epoch_reads.h"
#include "io/stream_source.h"
#include "sluice/source.h"

namespace sluice {

class StreamSession : public Source, public EpochReads {
 public:
  // `lookahead`: how far (in samples of the plan) a stream may run ahead; at least the shuffle
  // window plus the batches the loader reads ahead. REQUIRES: source != nullptr; lookahead >= 1.
  StreamSession(std::shared_ptr<const StreamSource> source, int64_t lookahead, int64_t max_file_bytes);
  ~StreamSession() override;
  StreamSession(const StreamSession&) = delete;
  StreamSession& operator=(const StreamSession&) = delete;

  int64_t size() const override { return source_->size(); }
  int64_t label(int64_t index) const override;
  std::string name(int64_t index) const override;
  // Waits until sample `index` of the current plan has passed in its stream (or failed).
  // Cancelled after Stop() or Retire(); FailedPrecondition for a sample the plan does not hold
  // (or holds fewer times).
  Result<SampleBytes> Read(int64_t index, const ByteAllocator& memory, int64_t max_bytes) const override;
  // As Read, from the plan of epoch `epoch`: the current one, or the announced next. Cancelled
  // when neither is that epoch's (a read for an epoch given up).
  Result<SampleBytes> ReadIn(int64_t epoch, int64_t index, const ByteAllocator& memory,
                             int64_t max_bytes) const override;
  uint64_t Digest() const override { return source_->Digest(); }
  std::vector<int64_t> EpochOrder(bool shuffle, uint64_t seed, int64_t epoch, int world_size) const override {
    return source_->EpochOrder(shuffle, seed, epoch, world_size);
  }

  // Starts reading for `wanted`, epoch `epoch`'s reads: sample indices, in the order the loader
  // will read them (an index twice when it is read twice). The announced next plan when it is
  // the same epoch's, the same reads and not retired (its streams and reads go on); otherwise
  // what runs is stopped first.
  void Plan(const std::vector<int64_t>& wanted, int64_t epoch);
  // Announces the reads of epoch `epoch` that will follow the current plan's (see above).
  // REQUIRES: after Plan.
  void PlanNext(const std::vector<int64_t>& wanted, int64_t epoch);
  // Wakes the current plan's waiting Reads (Cancelled) and ends its streams as they next look
  // for room; the announced plan's streams and reads go on unless `announced_too`. Reads of a
  // retired plan fail until the next Plan.
  void Retire(bool announced_too = false);
  // Ends every stream and wakes every waiting Read; Reads fail until the next Plan.
  void Stop();

  struct Counters {
    int64_t shards = 0;            // streams opened (a shard read twice counts twice)
    int64_t from_cache = 0;        // of them, read from the disk cache's copy
    int64_t bytes = 0;             // image bytes kept from the streams
    int64_t held_bytes = 0;        // kept now, not yet taken
    int64_t held_peak = 0;         // the most ever held
  };
  Counters counters() const;
  // Streams, bytes and the peak counted from now (the peak from what is held now).
  void ResetCounters();
  // The buffers the streams keep samples in: in use (held, or being read into) and idle.
  HostPool::Usage buffer_usage() const { return buffers_->usage(); }
  const StreamSource& source() const { return *source_; }

 private:
  struct Slot;
  struct Pass;
  struct Reads;  // one plan: its slots and passes
  std::shared_ptr<Reads> MakeReads(const std::vector<int64_t>& wanted, int64_t epoch) const;
  // Read and ReadIn: waits for sample `index` of plan `reads` (null: none), with `lock` (on mu_) held.
  Result<SampleBytes> ReadFrom(std::unique_lock<std::mutex>& lock, std::shared_ptr<Reads> reads, int64_t index,
                               const ByteAllocator& memory, int64_t max_bytes) const;
  void Start();  // threads for the plans, with mu_ not held
  void Work();   // a stream thread: runs passes until there is none to start
  void RunPass(const std::shared_ptr<Reads>& reads, size_t p);
  // With mu_ held: the next pass to start (and its plan), or nullopt.
  std::optional<std::pair<std::shared_ptr<Reads>, size_t>> NextPass();
  // With mu_ held: how far slot `slot` of `reads` lies beyond the earliest sample not yet taken.
  int64_t Distance(const Reads& reads, int64_t slot) const;
  // With mu_ held: a thread more when the earliest sample's shard waits for one while every
  // thread is busy (streams that wait for room can only free theirs by going on).
  void EnsureFrontierStarts() const;
  void Store(Reads& reads, size_t pass, int64_t slot, Status status, std::shared_ptr<uint8_t> bytes, size_t size,
             int64_t label, const std::string& name);
  void FailRest(Reads& reads, size_t pass, const Status& why);
  Status WaitForRoom(const Reads& reads, size_t pass);

  std::shared_ptr<const StreamSource> source_;
  const int64_t lookahead_;
  const int64_t max_file_bytes_;
  // A stream that reached the lookahead waits until the frontier has moved this many places
  // (lookahead / 8), then reads on: every Read waking every stream (2 x lanes threads) cost 35
  // context switches per image with 16 lanes, and on 16 cores halved the rate with 8.
  const int64_t room_step_;
  const size_t threads_wanted_;
  std::atomic<bool> stopped_{true};
  StreamOptions stream_options_;  // the source's, with cancel = &stopped_
  const std::shared_ptr<HostPool> buffers_ = HostPool::Create();  // what the streams keep

  mutable std::mutex mu_;
  mutable std::condition_variable taken_cv_;  // a slot was stored, or Stop (Read waits on it)
  mutable std::condition_variable room_cv_;   // the frontier moved, or Stop (streams and idle threads wait)
  std::shared_ptr<Reads> current_;            // the plan Read serves
  std::shared_ptr<Reads> next_;               // the announced one, or null
  mutable size_t idle_ = 0;                   // threads waiting for a pass to start
  mutable std::vector<std::thread> threads_;
  mutable std::vector<int64_t> labels_;       // by index: the source's, then what the streams said
  mutable std::unordered_map<int64_t, std::string> names_;  // by index, for samples that failed
  mutable Counters counters_;
};

}  // namespace sluice

#endif  // SLUICE_IO_STREAM_SESSION_H_
