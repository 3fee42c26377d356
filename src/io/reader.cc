#include "io/reader.h"

#include <utility>

#include "core/clock.h"

namespace sluice {

Result<std::unique_ptr<Reader>> Reader::Create(std::shared_ptr<const Source> source, int threads,
                                               int64_t max_bytes, ByteAllocator memory, StageCounters* counters) {
  std::unique_ptr<Reader> reader(new Reader(std::move(source), max_bytes, std::move(memory), counters));
  SLUICE_ASSIGN_OR_RETURN(reader->pool_, ThreadPool::Create(threads, "sluice-io"));
  return reader;
}

Reader::Reader(std::shared_ptr<const Source> source, int64_t max_bytes, ByteAllocator memory, StageCounters* counters)
    : source_(std::move(source)),
      by_epoch_(dynamic_cast<const EpochReads*>(source_.get())),
      max_bytes_(max_bytes),
      memory_(std::move(memory)),
      counters_(counters) {}

Reader::~Reader() { pool_.reset(); }

void Reader::Read(int64_t index, int64_t epoch, const std::atomic<bool>* cancelled, Done done) {
  pool_->Submit([this, index, epoch, cancelled, done = std::move(done)](int io_thread) {
    if (cancelled->load(std::memory_order_relaxed)) return done(Cancelled("cancelled"), io_thread);
    Result<SampleBytes> bytes = [&] {
      StageTimer timer(counters_, Stage::kRead);
      return by_epoch_ != nullptr ? by_epoch_->ReadIn(epoch, index, memory_, max_bytes_)
                                  : source_->Read(index, memory_, max_bytes_);
    }();
    if (bytes.ok()) counters_->bytes_read.fetch_add(static_cast<int64_t>(bytes->size), std::memory_order_relaxed);
    done(std::move(bytes), io_thread);
  });
}

}  // namespace sluice
