#include "io/stream_session.h"

#include <algorithm>
#include <cstring>

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

StreamSession::StreamSession(std::shared_ptr<const StreamSource> source, int64_t lookahead, int64_t max_file_bytes)
    : source_(std::move(source)),
      lookahead_(lookahead),
      max_file_bytes_(max_file_bytes),
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

void StreamSession::Stop() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = true;
    threads.swap(threads_);
  }
  taken_cv_.notify_all();
  room_cv_.notify_all();
  for (std::thread& t : threads) t.join();
}

void StreamSession::Plan(const std::vector<int64_t>& wanted) {
  Stop();
  std::lock_guard<std::mutex> lock(mu_);
  slots_.assign(wanted.size(), Slot{});
  pass_of_.assign(wanted.size(), -1);
  slots_of_.clear();
  passes_.clear();
  // A pass per (shard, occurrence): an index read twice is in two streams of its shard.
  std::unordered_map<int64_t, size_t> pass_at;  // shard * 2^8 + occurrence -> pass
  for (size_t q = 0; q < wanted.size(); ++q) {
    const int64_t index = wanted[q];
    slots_[q].index = index;
    std::vector<int64_t>& of = slots_of_[index];
    const int64_t occurrence = static_cast<int64_t>(of.size());
    of.push_back(static_cast<int64_t>(q));
    const auto [shard, place] = source_->Locate(index);
    const int64_t key = (static_cast<int64_t>(shard) << 8) + std::min<int64_t>(occurrence, 255);
    auto [it, fresh] = pass_at.emplace(key, passes_.size());
    if (fresh) {
      passes_.emplace_back();
      passes_.back().shard = shard;
      passes_.back().first = static_cast<int64_t>(q);
    }
    passes_[it->second].wanted.emplace_back(place, static_cast<int64_t>(q));
  }
  // Passes are made in the order of their first slot already; each keeps its samples by place.
  for (size_t p = 0; p < passes_.size(); ++p) {
    Pass& pass = passes_[p];
    std::sort(pass.wanted.begin(), pass.wanted.end());
    for (const auto& [place, slot] : pass.wanted) {
      pass.unstored.insert(slot);
      pass_of_[static_cast<size_t>(slot)] = static_cast<int32_t>(p);
    }
  }
  next_pass_ = 0;
  frontier_ = 0;
  idle_ = 0;
  counters_.held_bytes = 0;
  stopped_ = false;
  for (size_t t = 0; t < std::min(threads_wanted_, passes_.size()); ++t) threads_.emplace_back(&StreamSession::Work, this);
}

bool StreamSession::Startable(size_t p) const { return passes_[p].first <= frontier_ + lookahead_; }

void StreamSession::EnsureFrontierStarts() const {
  if (stopped_ || frontier_ >= static_cast<int64_t>(slots_.size()) || idle_ > 0) return;
  if (static_cast<size_t>(pass_of_[static_cast<size_t>(frontier_)]) < next_pass_) return;  // started
  auto* self = const_cast<StreamSession*>(this);
  threads_.emplace_back(&StreamSession::Work, self);
}

void StreamSession::Work() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    ++idle_;
    room_cv_.wait(lock, [&] { return stopped_ || next_pass_ >= passes_.size() || Startable(next_pass_); });
    --idle_;
    if (stopped_ || next_pass_ >= passes_.size()) return;
    const size_t p = next_pass_++;
    lock.unlock();
    RunPass(p);
    lock.lock();
  }
}

Status StreamSession::WaitForRoom(size_t p) {
  std::unique_lock<std::mutex> lock(mu_);
  const Pass& pass = passes_[p];
  room_cv_.wait(lock, [&] { return stopped_ || pass.unstored.empty() || *pass.unstored.begin() <= frontier_ + lookahead_; });
  return stopped_ ? Cancelled("stopped") : Status::OK();
}

void StreamSession::Store(size_t p, int64_t slot, Status status, std::shared_ptr<uint8_t> bytes, size_t size,
                          int64_t label, const std::string& name) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    Slot& s = slots_[static_cast<size_t>(slot)];
    s.stored = true;
    s.status = std::move(status);
    s.bytes = std::move(bytes);
    s.size = size;
    passes_[p].unstored.erase(slot);
    if (s.status.ok()) {
      labels_[static_cast<size_t>(s.index)] = label;
      counters_.bytes += static_cast<int64_t>(size);
      counters_.held_bytes += static_cast<int64_t>(size);
      counters_.held_peak = std::max(counters_.held_peak, counters_.held_bytes);
    } else if (!name.empty()) {
      names_[s.index] = name;
    }
  }
  taken_cv_.notify_all();
}

void StreamSession::FailRest(size_t p, const Status& why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int64_t slot : passes_[p].unstored) {
      Slot& s = slots_[static_cast<size_t>(slot)];
      s.stored = true;
      s.status = why;
    }
    passes_[p].unstored.clear();
  }
  taken_cv_.notify_all();
}

void StreamSession::RunPass(size_t p) {
  const Pass& pass = passes_[p];  // only `unstored` changes, under mu_
  const std::string& url = source_->urls()[static_cast<size_t>(pass.shard)];
  Result<std::unique_ptr<ShardStream>> opened = ShardStream::Open(url, stream_options_, source_->disk_cache());
  if (!opened.ok()) {
    if (!stopped_) FailRest(p, opened.status());
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
    SLUICE_RETURN_IF_ERROR(WaitForRoom(p));
    image_of = place;
    image.reset();
    image_size = 0;
    image_status = Status::OK();
    if (m.size > max_file_bytes_) {
      image_status = Unsupported(url, ":", m.name, ": ", m.size, " bytes, over the file size limit of ",
                                 max_file_bytes_, " bytes (max_file_bytes)");
      return Status::OK();
    }
    std::shared_ptr<uint8_t> buffer(new (std::nothrow) uint8_t[static_cast<size_t>(m.size) + 1],
                                    std::default_delete<uint8_t[]>());
    if (buffer == nullptr) return ResourceExhausted(url, ":", m.name, ": cannot allocate ", m.size, " bytes");
    SLUICE_RETURN_IF_ERROR(t->ReadData(std::span<uint8_t>(buffer.get(), static_cast<size_t>(m.size))));
    image = std::move(buffer);
    image_size = static_cast<size_t>(m.size);
    return Status::OK();
  };
  hooks.sample = [&](int64_t place, ShardSample&& sample) -> bool {
    seen = place + 1;
    if (!wanted(place)) return !stopped_;
    const std::string member = sample.key + "." + (sample.image_ext.empty() ? std::string("*") : sample.image_ext);
    const std::string name = url + ":" + member;
    Status st;
    if (!sample.problem.empty()) st = CorruptData(name, ": ", sample.problem);
    else if (image_of != place) st = Internal(name, ": its image was not read");
    else st = image_status;
    std::shared_ptr<uint8_t> bytes = st.ok() ? std::move(image) : nullptr;
    Store(p, pass.wanted[at].second, std::move(st), std::move(bytes), image_size, sample.label, name);
    image.reset();
    image_of = -1;
    ++at;
    return at < pass.wanted.size() && !stopped_;  // all kept: the walk may stop here
  };
  const Status walked = WalkShard(&tar, source_->options().spec, hooks);
  if (stopped_) return;
  bool rest = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    rest = !passes_[p].unstored.empty();
  }
  if (rest) {
    FailRest(p, walked.ok() ? CorruptData(url, ": the shard ends after ", seen, " samples; ",
                                          source_->shard_size(pass.shard), " were expected (from its manifest or index)")
                            : walked);
    return;
  }
  if (walked.ok()) (void)stream.Finish();  // the rest into the disk cache; a failure there only costs the copy
}

Result<SampleBytes> StreamSession::Read(int64_t index, const ByteAllocator& memory, int64_t max_bytes) const {
  std::unique_lock<std::mutex> lock(mu_);
  if (stopped_) return Cancelled(source_->name(index), ": the loader stopped reading");
  auto it = slots_of_.find(index);
  int64_t slot = -1;
  if (it != slots_of_.end())
    for (int64_t q : it->second)
      if (!slots_[static_cast<size_t>(q)].claimed) {
        slot = q;
        break;
      }
  if (slot < 0) return FailedPrecondition(source_->name(index), ": not in this epoch's plan (read more often than planned)");
  Slot& s = slots_[static_cast<size_t>(slot)];
  s.claimed = true;
  EnsureFrontierStarts();
  taken_cv_.wait(lock, [&] { return stopped_ || s.stored; });
  if (stopped_) return Cancelled(source_->name(index), ": the loader stopped reading");
  s.taken = true;
  std::shared_ptr<uint8_t> bytes = std::move(s.bytes);
  const size_t size = s.size;
  const Status status = std::move(s.status);
  if (status.ok()) counters_.held_bytes -= static_cast<int64_t>(size);
  while (frontier_ < static_cast<int64_t>(slots_.size()) && slots_[static_cast<size_t>(frontier_)].taken) ++frontier_;
  EnsureFrontierStarts();
  lock.unlock();
  room_cv_.notify_all();
  if (!status.ok()) return status;
  if (static_cast<int64_t>(size) > max_bytes)
    return Unsupported(name(index), ": ", size, " bytes, over the file size limit of ", max_bytes, " bytes (max_file_bytes)");
  SampleBytes out;
  out.owner = memory(size + 1);
  if (!out.owner) return ResourceExhausted(name(index), ": cannot allocate ", size, " bytes");
  std::memcpy(out.owner.get(), bytes.get(), size);
  out.data = out.owner.get();
  out.size = size;
  return out;
}

StreamSession::Counters StreamSession::counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counters_;
}

}  // namespace sluice
