#include "io/memory_cache.h"

#include <cstring>

#include "io/copy_bytes.h"

namespace sluice {

MemoryCache::MemoryCache(std::shared_ptr<const Source> source, int64_t budget, CacheHandOut hand_out)
    : source_(std::move(source)), budget_(budget), hand_out_(hand_out),
      kept_(static_cast<size_t>(source_->size())) {}

Result<SampleBytes> MemoryCache::Read(int64_t index, const ByteAllocator& memory, int64_t max_bytes) const {
  return hand_out_ == CacheHandOut::kShare ? ReadAndShare(index, memory, max_bytes)
                                           : ReadAndCopy(index, memory, max_bytes);
}

MemoryCache::Kept MemoryCache::Find(int64_t index, int64_t max_bytes) const {
  const Kept& k = kept_[static_cast<size_t>(index)];
  return k.owner != nullptr && static_cast<int64_t>(k.size) <= max_bytes ? k : Kept{};
}

Result<SampleBytes> MemoryCache::ReadAndShare(int64_t index, const ByteAllocator& memory, int64_t max_bytes) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    const Kept k = Find(index, max_bytes);
    if (k.owner != nullptr) {
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

Result<SampleBytes> MemoryCache::ReadAndCopy(int64_t index, const ByteAllocator& memory, int64_t max_bytes) const {
  Kept k;
  {
    std::lock_guard<std::mutex> lock(mu_);
    k = Find(index, max_bytes);
  }
  if (k.owner != nullptr) {  // a copy of the kept bytes (kept for good: no lock needed to read them)
    hits_.fetch_add(1, std::memory_order_relaxed);
    return CopyBytes(k.owner.get(), k.size, memory, name(index));
  }
  misses_.fetch_add(1, std::memory_order_relaxed);
  Result<SampleBytes> bytes = source_->Read(index, memory, max_bytes);
  if (!bytes.ok()) return bytes;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (kept_[static_cast<size_t>(index)].owner != nullptr || bytes_ + static_cast<int64_t>(bytes->size) > budget_)
      return bytes;
    bytes_ += static_cast<int64_t>(bytes->size);  // reserved while the copy is made
  }
  std::shared_ptr<uint8_t> copy(new uint8_t[bytes->size], std::default_delete<uint8_t[]>());
  std::memcpy(copy.get(), bytes->data, bytes->size);
  std::lock_guard<std::mutex> lock(mu_);
  Kept& kept = kept_[static_cast<size_t>(index)];
  if (kept.owner == nullptr) {
    kept = Kept{std::move(copy), bytes->size};
  } else {  // another thread kept it meanwhile
    bytes_ -= static_cast<int64_t>(bytes->size);
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
