#include "io/stream_session.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "io/copy_bytes.h"
#include "io/shard_stream.h"
#include "io/tar_reader.h"
#include "io/webdataset_index.h"

namespace sluice {

// One planned read.
struct StreamSession::Slot {
  int64_t index = 0;
  bool claimed = false;  // a Read waits for it, or took it
  bool stored = false;   // its bytes (or its failure) are here
  bool taken = false;    // a Read took it
  Status status;
  std::shared_ptr<uint8_t> bytes;
  size_t size = 0;
};

// One stream over one shard: the samples it keeps (by their place in the shard), and the slots
// they fill.
struct StreamSession::Pass {
  int shard = 0;
  std::vector<std::pair<int64_t, int64_t>> wanted;  // (place in the shard, slot), by place
  std::set<int64_t> unstored;                       // slots not yet stored
  int64_t first = 0;                                // its earliest slot
};

// One plan (an epoch's reads). Changed under mu_, except `wanted` and the passes' `wanted`,
// which stay as made.
struct StreamSession::Reads {
  int64_t epoch = 0;
  std::vector<int64_t> wanted;
  std::vector<Slot> slots;                                        // in the order of `wanted`
  std::vector<int32_t> pass_of;                                   // slot -> its pass
  std::unordered_map<int64_t, std::vector<int64_t>> slots_of;    // index -> its slots, in order
  std::vector<Pass> passes;                                       // by first slot
  size_t next_pass = 0;                                           // the next pass to start
  int64_t frontier = 0;                                           // the earliest slot not taken
  int64_t woken_at = 0;                                           // the frontier when room_cv_ was last notified
  int64_t held = 0;                                               // bytes stored, not taken
  std::atomic<bool> retired{false};                               // neither current nor next
};

StreamSession::StreamSession(std::shared_ptr<const StreamSource> source, int64_t lookahead, int64_t max_file_bytes)
    : source_(std::move(source)),
      lookahead_(lookahead),
      max_file_bytes_(max_file_bytes),
      room_step_(std::max<int64_t>(1, lookahead / 8)),
      threads_wanted_(static_cast<size_t>(2 * source_->options().layout.lanes)),
      stream_options_(source_->options().stream) {
  stream_options_.cancel = &stopped_;
  labels_.resize(static_cast<size_t>(source_->size()));
  for (int64_t i = 0; i < source_->size(); ++i) labels_[static_cast<size_t>(i)] = source_->label(i);
}

StreamSession::~StreamSession() { Stop(); }

int64_t StreamSession::label(int64_t index) const {
  std::lock_guard<std::mutex> lock(mu_);
  return labels_[static_cast<size_t>(index)];
}

std::string StreamSession::name(int64_t index) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = names_.find(index); it != names_.end()) return it->second;
  }
  return source_->name(index);
}

std::shared_ptr<StreamSession::Reads> StreamSession::MakeReads(const std::vector<int64_t>& wanted,
                                                               int64_t epoch) const {
  auto reads = std::make_shared<Reads>();
  Reads& r = *reads;
  r.epoch = epoch;
  r.wanted = wanted;
  r.slots.assign(wanted.size(), Slot{});
  r.pass_of.assign(wanted.size(), -1);
  // A pass per (shard, occurrence): an index read twice is in two streams of its shard.
  std::unordered_map<int64_t, size_t> pass_at;  // shard * 2^8 + occurrence -> pass
  for (size_t q = 0; q < wanted.size(); ++q) {
    const int64_t index = wanted[q];
    r.slots[q].index = index;
    std::vector<int64_t>& of = r.slots_of[index];
    const int64_t occurrence = static_cast<int64_t>(of.size());
    of.push_back(static_cast<int64_t>(q));
    const auto [shard, place] = source_->Locate(index);
    const int64_t key = (static_cast<int64_t>(shard) << 8) + std::min<int64_t>(occurrence, 255);
    auto [it, fresh] = pass_at.emplace(key, r.passes.size());
    if (fresh) {
      r.passes.emplace_back();
      r.passes.back().shard = shard;
      r.passes.back().first = static_cast<int64_t>(q);
    }
    r.passes[it->second].wanted.emplace_back(place, static_cast<int64_t>(q));
  }
  // Passes are made in the order of their first slot already; each keeps its samples by place.
  for (size_t p = 0; p < r.passes.size(); ++p) {
    Pass& pass = r.passes[p];
    std::sort(pass.wanted.begin(), pass.wanted.end());
    for (const auto& [place, slot] : pass.wanted) {
      pass.unstored.insert(slot);
      r.pass_of[static_cast<size_t>(slot)] = static_cast<int32_t>(p);
    }
  }
  return reads;
}

void StreamSession::Retire(bool announced_too) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (current_ != nullptr) current_->retired = true;
    if (announced_too && next_ != nullptr) next_->retired = true;
  }
  taken_cv_.notify_all();
  room_cv_.notify_all();
}

void StreamSession::Stop() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = true;
    for (Reads* r : {current_.get(), next_.get()})
      if (r != nullptr) r->retired = true;
    threads.swap(threads_);
  }
  taken_cv_.notify_all();
  room_cv_.notify_all();
  for (std::thread& t : threads) t.join();
  std::lock_guard<std::mutex> lock(mu_);
  current_.reset();
  next_.reset();
}

void StreamSession::Plan(const std::vector<int64_t>& wanted, int64_t epoch) {
  buffers_->Sweep();  // idle buffers the last epoch did not reuse
  bool carried_on = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Announced: its streams, and the reads already made of it, go on.
    if (!stopped_ && next_ != nullptr && !next_->retired && next_->epoch == epoch && next_->wanted == wanted) {
      if (current_ != nullptr) current_->retired = true;
      current_ = std::move(next_);
      next_.reset();
      carried_on = true;
    }
  }
  if (carried_on) {
    taken_cv_.notify_all();
    room_cv_.notify_all();
    return;
  }
  Stop();
  std::shared_ptr<Reads> reads = MakeReads(wanted, epoch);
  std::lock_guard<std::mutex> lock(mu_);
  current_ = std::move(reads);
  idle_ = 0;
  stopped_ = false;
  for (size_t t = 0; t < threads_wanted_; ++t) threads_.emplace_back(&StreamSession::Work, this);
}

void StreamSession::PlanNext(const std::vector<int64_t>& wanted, int64_t epoch) {
  std::shared_ptr<Reads> reads = MakeReads(wanted, epoch);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return;
    if (next_ != nullptr) next_->retired = true;
    next_ = std::move(reads);
  }
  room_cv_.notify_all();
}

int64_t StreamSession::Distance(const Reads& reads, int64_t slot) const {
  if (&reads == current_.get()) return slot - reads.frontier;
  if (&reads == next_.get())
    return (current_ == nullptr ? 0 : static_cast<int64_t>(current_->slots.size()) - current_->frontier) + slot;
  return std::numeric_limits<int64_t>::max() / 2;
}

std::optional<std::pair<std::shared_ptr<StreamSession::Reads>, size_t>> StreamSession::NextPass() {
  for (const std::shared_ptr<Reads>& r : {current_, next_}) {
    if (r == nullptr || r->retired) continue;
    if (r->next_pass >= r->passes.size()) continue;  // all of this plan's passes started
    if (Distance(*r, r->passes[r->next_pass].first) > lookahead_) return std::nullopt;
    return std::make_pair(r, r->next_pass++);
  }
  return std::nullopt;
}

void StreamSession::EnsureFrontierStarts() const {
  const Reads* r = current_.get();
  if (stopped_ || r == nullptr || r->frontier >= static_cast<int64_t>(r->slots.size()) || idle_ > 0) return;
  if (static_cast<size_t>(r->pass_of[static_cast<size_t>(r->frontier)]) < r->next_pass) return;  // started
  // Threads stay until Stop: a bound keeps an order that keeps needing them from piling them up
  // (the streams' own order needs `lanes` at a time, and the next epoch's as many again).
  if (threads_.size() >= 4 * threads_wanted_) return;
  threads_.emplace_back(&StreamSession::Work, const_cast<StreamSession*>(this));
}

void StreamSession::Work() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    ++idle_;
    std::optional<std::pair<std::shared_ptr<Reads>, size_t>> job;
    room_cv_.wait(lock, [&] { return stopped_ || (job = NextPass()).has_value(); });
    --idle_;
    if (stopped_) return;
    lock.unlock();
    RunPass(job->first, job->second);
    lock.lock();
  }
}

Status StreamSession::WaitForRoom(const Reads& reads, size_t p) {
  std::unique_lock<std::mutex> lock(mu_);
  const Pass& pass = reads.passes[p];
  // Within `limit` of the frontier; a sample a Read waits for may go up to the lookahead.
  const auto room = [&](int64_t limit) {
    if (stopped_ || reads.retired || pass.unstored.empty()) return true;
    const int64_t slot = *pass.unstored.begin(), d = Distance(reads, slot);
    return d <= limit || (d <= lookahead_ && reads.slots[static_cast<size_t>(slot)].claimed);
  };
  if (!room(lookahead_)) room_cv_.wait(lock, [&] { return room(lookahead_ - room_step_); });
  return stopped_ || reads.retired ? Cancelled("stopped") : Status::OK();
}

void StreamSession::Store(Reads& reads, size_t p, int64_t slot, Status status, std::shared_ptr<uint8_t> bytes,
                          size_t size, int64_t label, const std::string& name) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    Slot& s = reads.slots[static_cast<size_t>(slot)];
    s.stored = true;
    s.status = std::move(status);
    s.bytes = std::move(bytes);
    s.size = size;
    reads.passes[p].unstored.erase(slot);
    if (s.status.ok()) {
      labels_[static_cast<size_t>(s.index)] = label;
      reads.held += static_cast<int64_t>(size);
      counters_.bytes += static_cast<int64_t>(size);
      const int64_t held = (current_ ? current_->held : 0) + (next_ ? next_->held : 0);
      counters_.held_peak = std::max(counters_.held_peak, held);
    } else if (!name.empty()) {
      names_[s.index] = name;
    }
  }
  taken_cv_.notify_all();
}

void StreamSession::FailRest(Reads& reads, size_t p, const Status& why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int64_t slot : reads.passes[p].unstored) {
      Slot& s = reads.slots[static_cast<size_t>(slot)];
      s.stored = true;
      s.status = why;
    }
    reads.passes[p].unstored.clear();
  }
  taken_cv_.notify_all();
}

void StreamSession::RunPass(const std::shared_ptr<Reads>& plan, size_t p) {
  Reads& reads = *plan;
  const Pass& pass = reads.passes[p];  // only `unstored` changes, under mu_
  const std::string& url = source_->urls()[static_cast<size_t>(pass.shard)];
  auto ended = [&] { return stopped_.load() || reads.retired.load(); };  // nobody waits for this pass
  Result<std::unique_ptr<ShardStream>> opened = ShardStream::Open(url, stream_options_, source_->disk_cache());
  if (!opened.ok()) {
    if (!stopped_) FailRest(reads, p, opened.status());
    return;
  }
  ShardStream& stream = **opened;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++counters_.shards;
    if (std::strcmp(stream.origin(), "cache") == 0) ++counters_.from_cache;
  }
  TarReader tar(stream.input(), url);
  size_t at = 0;       // the first wanted sample not yet passed
  int64_t seen = 0;    // samples passed
  std::shared_ptr<uint8_t> image;
  size_t image_size = 0;
  int64_t image_of = -1;  // the sample whose image `image` holds
  Status image_status;
  auto wanted = [&](int64_t place) {
    while (at < pass.wanted.size() && pass.wanted[at].first < place) ++at;
    return at < pass.wanted.size() && pass.wanted[at].first == place;
  };
  ShardWalkHooks hooks;
  hooks.image = [&](int64_t place, const TarMember& m, TarReader* t) -> Status {
    if (!wanted(place)) return Status::OK();
    SLUICE_RETURN_IF_ERROR(WaitForRoom(reads, p));
    image_of = place;
    image.reset();
    image_size = 0;
    image_status = Status::OK();
    if (m.size > max_file_bytes_) {
      image_status = Unsupported(url, ":", m.name, ": ", m.size, " bytes, over the file size limit of ",
                                 max_file_bytes_, " bytes (max_file_bytes)");
      return Status::OK();
    }
    std::shared_ptr<uint8_t> buffer = buffers_->Allocate(static_cast<size_t>(m.size) + 1);
    if (buffer == nullptr) return ResourceExhausted(url, ":", m.name, ": cannot allocate ", m.size, " bytes");
    SLUICE_RETURN_IF_ERROR(t->ReadData(std::span<uint8_t>(buffer.get(), static_cast<size_t>(m.size))));
    image = std::move(buffer);
    image_size = static_cast<size_t>(m.size);
    return Status::OK();
  };
  hooks.sample = [&](int64_t place, ShardSample&& sample) -> bool {
    seen = place + 1;
    if (!wanted(place)) return !ended();
    const std::string member = sample.key + "." + (sample.image_ext.empty() ? std::string("*") : sample.image_ext);
    const std::string name = url + ":" + member;
    Status st;
    if (!sample.problem.empty()) st = CorruptData(name, ": ", sample.problem);
    else if (image_of != place) st = Internal(name, ": its image was not read");
    else st = image_status;
    std::shared_ptr<uint8_t> bytes = st.ok() ? std::move(image) : nullptr;
    Store(reads, p, pass.wanted[at].second, std::move(st), std::move(bytes), image_size, sample.label, name);
    image.reset();
    image_of = -1;
    ++at;
    return at < pass.wanted.size() && !ended();  // all kept: the walk may stop here
  };
  const Status walked = WalkShard(&tar, source_->options().spec, hooks);
  bool rest = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    rest = !reads.passes[p].unstored.empty();
  }
  if (rest) {
    if (ended()) return;
    FailRest(reads, p, walked.ok() ? CorruptData(url, ": the shard ends after ", seen, " samples; ",
                                                 source_->shard_size(pass.shard),
                                                 " were expected (from its manifest or index)")
                                   : walked);
    return;
  }
  if (walked.ok() && !stopped_) (void)stream.Finish();  // the rest into the disk cache; a failure there only costs the copy
}

Result<SampleBytes> StreamSession::Read(int64_t index, const ByteAllocator& memory, int64_t max_bytes) const {
  std::unique_lock<std::mutex> lock(mu_);
  return ReadFrom(lock, current_, index, memory, max_bytes);
}

Result<SampleBytes> StreamSession::ReadIn(int64_t epoch, int64_t index, const ByteAllocator& memory,
                                          int64_t max_bytes) const {
  std::unique_lock<std::mutex> lock(mu_);
  std::shared_ptr<Reads> reads = current_ != nullptr && current_->epoch == epoch ? current_
                                 : next_ != nullptr && next_->epoch == epoch     ? next_
                                                                                 : nullptr;
  return ReadFrom(lock, std::move(reads), index, memory, max_bytes);
}

Result<SampleBytes> StreamSession::ReadFrom(std::unique_lock<std::mutex>& lock, std::shared_ptr<Reads> reads,
                                            int64_t index, const ByteAllocator& memory, int64_t max_bytes) const {
  if (stopped_ || reads == nullptr || reads->retired)
    return Cancelled(source_->name(index), ": the loader stopped reading");
  auto it = reads->slots_of.find(index);
  int64_t slot = -1;
  if (it != reads->slots_of.end())
    for (int64_t q : it->second)
      if (!reads->slots[static_cast<size_t>(q)].claimed) {
        slot = q;
        break;
      }
  if (slot < 0) return FailedPrecondition(source_->name(index), ": not in this epoch's plan (read more often than planned)");
  Slot& s = reads->slots[static_cast<size_t>(slot)];
  s.claimed = true;
  EnsureFrontierStarts();
  if (!s.stored) room_cv_.notify_all();  // its stream may wait for room: a claimed slot has it
  taken_cv_.wait(lock, [&] { return stopped_ || reads->retired || s.stored; });
  if (stopped_ || reads->retired) return Cancelled(source_->name(index), ": the loader stopped reading");
  s.taken = true;
  std::shared_ptr<uint8_t> bytes = std::move(s.bytes);
  const size_t size = s.size;
  const Status status = std::move(s.status);
  if (status.ok()) reads->held -= static_cast<int64_t>(size);
  while (reads->frontier < static_cast<int64_t>(reads->slots.size()) &&
         reads->slots[static_cast<size_t>(reads->frontier)].taken)
    ++reads->frontier;
  EnsureFrontierStarts();
  // The streams waiting for room wake once the frontier has moved room_step_ on (see WaitForRoom).
  const bool room = reads->frontier >= reads->woken_at + room_step_;
  if (room) reads->woken_at = reads->frontier;
  lock.unlock();
  if (room) room_cv_.notify_all();
  if (!status.ok()) return status;
  if (static_cast<int64_t>(size) > max_bytes)
    return Unsupported(name(index), ": ", size, " bytes, over the file size limit of ", max_bytes, " bytes (max_file_bytes)");
  return CopyBytes(bytes.get(), size, memory, name(index));
}

StreamSession::Counters StreamSession::counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  Counters c = counters_;
  c.held_bytes = (current_ ? current_->held : 0) + (next_ ? next_->held : 0);
  return c;
}

void StreamSession::ResetCounters() {
  std::lock_guard<std::mutex> lock(mu_);
  counters_ = Counters{};
  counters_.held_peak = (current_ ? current_->held : 0) + (next_ ? next_->held : 0);
}

}  // namespace sluice
