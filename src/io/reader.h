// Reader: reads samples' bytes from a Source ahead of the threads that decode them, on I/O
// threads of its own, in submission order. A loader submits every sample of the batches it has
// in flight, so reads run ahead of decoding by up to `prefetch` batches (read-ahead), and each
// read hands its bytes to a callback on the I/O thread, which passes them on (a decode task, a
// header parse).
//
//   auto reader = Reader::Create(source, 2, options.max_file_bytes, [pool](size_t n) { return pool->Allocate(n); }, &counters);
//   (*reader)->Read(index, epoch, &batch->cancelled, [batch](Result<SampleBytes> bytes, int io_thread) { ... });
//
// Thread-safety: Read() may be called from any thread, also from inside a callback. The
// destructor finishes the reads submitted and their callbacks before it returns, so a Reader must
// be destroyed before what its callbacks submit work to.
#ifndef SLUICE_IO_READER_H_
#define SLUICE_IO_READER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "core/stage_counters.h"
#include "core/thread_pool.h"
#include "io/epoch_reads.h"
#include "sluice/source.h"

namespace sluice {

class Reader {
 public:
  using Done = std::function<void(Result<SampleBytes> bytes, int io_thread)>;

  // Files larger than `max_bytes` are refused before reading. ResourceExhausted when its threads
  // cannot start. `counters` (read time and bytes) must outlive the Reader. REQUIRES: threads >= 1.
  static Result<std::unique_ptr<Reader>> Create(std::shared_ptr<const Source> source, int threads,
                                                int64_t max_bytes, ByteAllocator memory, StageCounters* counters);
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  const Source& source() const { return *source_; }
  int threads() const { return pool_->size(); }
  // Only I/O threads 0..n-1 take reads from now on (ThreadPool::SetActive).
  void SetActive(int n) { pool_->SetActive(n); }
  // Keeps the I/O threads on `cpus` (ThreadPool::PinTo).
  bool PinTo(const std::vector<int>& cpus) { return pool_->PinTo(cpus); }
  bool OnOwnThread() const { return pool_->OnWorkerThread(); }

  // Reads sample `index` of epoch `epoch` on an I/O thread and calls `done` there with its bytes
  // or the error naming it; with Cancelled, unread, when `*cancelled` is set by the time the read
  // would start. The epoch matters to sources that serve reads by epoch (io/epoch_reads.h).
  // REQUIRES: *cancelled lives until `done` has been called.
  void Read(int64_t index, int64_t epoch, const std::atomic<bool>* cancelled, Done done);

 private:
  Reader(std::shared_ptr<const Source> source, int64_t max_bytes, ByteAllocator memory, StageCounters* counters);

  std::shared_ptr<const Source> source_;
  const EpochReads* by_epoch_;  // source_, when it serves reads by epoch
  int64_t max_bytes_;
  ByteAllocator memory_;
  StageCounters* counters_;
  std::unique_ptr<ThreadPool> pool_;
};

}  // namespace sluice

#endif  // SLUICE_IO_READER_H_
