#include "io/memory_cache.h"

namespace sluice {

MemoryCache::MemoryCache(std::shared_ptr<const Source> source, int64_t budget)
    : source_(std::move(source)), budget_(budget), kept_(static_cast<size_t>(source_->size())) {}

Result<SampleBytes> MemoryCache::Read(int64_t index, const ByteAllocator& memory, int64_t max_bytes) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    const Kept& k = kept_[static_cast<size_t>(index)];
    if (k.owner != nullptr && static_cast<int64_t>(k.size) <= max_bytes) {
      hits_.fetch_add(1, std::memory_order_relaxed);
      return SampleBytes{k.owner, k.owner.get(), k.size};
    }
  }
  misses_.fetch_add(1, std::memory_order_relaxed);
  // While the budget has room, the source reads into a buffer of the cache's own (the loader's
  // pool reuses its buffers), reserved here and kept below: no copy.
  std::shared_ptr<uint8_t> own;
  size_t reserved = 0;
  const ByteAllocator keep = [&](size_t n) -> std::shared_ptr<uint8_t> {
    bool room = false;
    if (own == nullptr) {
      std::lock_guard<std::mutex> lock(mu_);
      room = bytes_ + static_cast<int64_t>(n) <= budget_ + 1;  // sources ask for the size + 1
      if (room) bytes_ += static_cast<int64_t>(n);
    }
    if (!room) return memory(n);
    reserved = n;
    own.reset(new uint8_t[n], std::default_delete<uint8_t[]>());
    return own;
  };
  Result<SampleBytes> bytes = source_->Read(index, keep, max_bytes);
  std::lock_guard<std::mutex> lock(mu_);
  bytes_ -= static_cast<int64_t>(reserved);
  if (!bytes.ok() || own == nullptr || bytes->owner != own) return bytes;
  Kept& k = kept_[static_cast<size_t>(index)];
  if (k.owner == nullptr && bytes_ + static_cast<int64_t>(bytes->size) <= budget_) {  // else: kept meanwhile
    k = Kept{own, bytes->size};
    bytes_ += static_cast<int64_t>(bytes->size);
  }
  return bytes;
}

void MemoryCache::ResetCounters() {
  hits_.store(0);
  misses_.store(0);
}

MemoryCache::Counters MemoryCache::counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  return Counters{hits_.load(), misses_.load(), bytes_, budget_};
}

}  // namespace sluice
