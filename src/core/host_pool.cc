#include "core/host_pool.h"

#include <algorithm>
#include <bit>
#include <new>

namespace sluice {

namespace {
constexpr std::align_val_t kAlign{64};
}

std::shared_ptr<HostPool> HostPool::Create(RawAllocator allocator) {
  return std::shared_ptr<HostPool>(new HostPool(allocator));
}

uint8_t* HostPool::RawAllocate(size_t bytes) const {
  if (allocator_.allocate != nullptr) return static_cast<uint8_t*>(allocator_.allocate(bytes));
  return static_cast<uint8_t*>(::operator new(bytes, kAlign, std::nothrow));
}

void HostPool::RawFree(uint8_t* p) const {
  if (allocator_.free != nullptr) {
    allocator_.free(p);
  } else {
    ::operator delete(p, kAlign);
  }
}

HostPool::~HostPool() { Trim(); }

size_t HostPool::RoundUp(size_t bytes) {
  // Classes: 4 KiB minimum, then 8 classes per power of two (at most 12.5% waste).
  constexpr size_t kMin = 4096;
  if (bytes <= kMin) return kMin;
  size_t p = std::bit_floor(bytes);
  size_t step = p / 8;
  return (bytes + step - 1) / step * step;
}

std::shared_ptr<uint8_t> HostPool::Allocate(size_t bytes) {
  size_t size_class = RoundUp(bytes);
  uint8_t* p = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Best fit among idle buffers up to twice the class: file sizes vary, and exact classes
    // alone would miss most of the time.
    auto it = free_.lower_bound(size_class);
    if (it != free_.end() && it->first <= 2 * size_class) {
      size_class = it->first;
      p = it->second.back();
      it->second.pop_back();
      if (it->second.empty()) free_.erase(it);
      usage_.cached_bytes -= static_cast<int64_t>(size_class);
    }
    usage_.in_use_bytes += static_cast<int64_t>(size_class);
    usage_.peak_bytes = std::max(usage_.peak_bytes, usage_.in_use_bytes);
  }
  if (p == nullptr) {
    p = RawAllocate(size_class);
    if (p == nullptr) {
      std::lock_guard<std::mutex> lock(mu_);
      usage_.in_use_bytes -= static_cast<int64_t>(size_class);
      return nullptr;
    }
  }
  std::weak_ptr<HostPool> weak = weak_from_this();
  return std::shared_ptr<uint8_t>(p, [weak, size_class, raw = allocator_](uint8_t* q) {
    if (auto pool = weak.lock()) {
      pool->Release(q, size_class);
    } else if (raw.free != nullptr) {
      raw.free(q);
    } else {
      ::operator delete(q, kAlign);
    }
  });
}

void HostPool::Release(uint8_t* p, size_t size_class) {
  std::lock_guard<std::mutex> lock(mu_);
  usage_.in_use_bytes -= static_cast<int64_t>(size_class);
  usage_.cached_bytes += static_cast<int64_t>(size_class);
  free_[size_class].push_back(p);
}

void HostPool::Trim() {
  std::map<size_t, std::vector<uint8_t*>> idle;
  {
    std::lock_guard<std::mutex> lock(mu_);
    idle.swap(free_);
    usage_.cached_bytes = 0;
  }
  for (auto& [size_class, buffers] : idle)
    for (uint8_t* p : buffers) RawFree(p);
}

HostPool::Usage HostPool::usage() const {
  std::lock_guard<std::mutex> lock(mu_);
  return usage_;
}

}  // namespace sluice
