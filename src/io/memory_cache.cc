#include "io/memory_cache.h"

#include <cstring>

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
  SLUICE_ASSIGN_OR_RETURN(SampleBytes bytes, source_->Read(index, memory, max_bytes));
  const int64_t size = static_cast<int64_t>(bytes.size);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (bytes_ + size > budget_ || kept_[static_cast<size_t>(index)].owner != nullptr) return bytes;
    bytes_ += size;  // reserved before the copy, outside the lock
  }
  // A buffer of its own: the one read comes from the loader's pool, which reuses it.
  std::shared_ptr<uint8_t> own(new uint8_t[bytes.size + 1], std::default_delete<uint8_t[]>());
  if (bytes.size > 0) std::memcpy(own.get(), bytes.data, bytes.size);
  std::lock_guard<std::mutex> lock(mu_);
  Kept& k = kept_[static_cast<size_t>(index)];
  if (k.owner == nullptr) {
    k = Kept{own, bytes.size};
  } else {
    bytes_ -= size;  // another thread kept it meanwhile
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
