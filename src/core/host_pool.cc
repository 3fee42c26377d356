#include "core/host_pool.h"

#include <algorithm>
#include <bit>
#include <iterator>
#include <new>
#include <utility>

#include <sys/mman.h>

namespace sluice {

namespace {
constexpr std::align_val_t kAlign{64};

// Without a RawAllocator, buffers of 64 KiB and more are mapped pages of their own: freed, they
// go back to the system at once. From malloc they would stay in its arenas (glibc raises its
// mmap threshold as large blocks are freed), and a process's RSS would creep as sizes vary.
constexpr size_t kMapBytes = 64 * 1024;

uint8_t* SystemAllocate(size_t bytes) {
  if (bytes < kMapBytes) return static_cast<uint8_t*>(::operator new(bytes, kAlign, std::nothrow));
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : static_cast<uint8_t*>(p);
}

void SystemFree(uint8_t* p, size_t bytes) {
  if (bytes < kMapBytes) {
    ::operator delete(p, kAlign);
  } else {
    munmap(p, bytes);
  }
}
}  // namespace

void* RawAllocator::Allocate(size_t bytes) const {
  return allocate != nullptr ? allocate(ctx.get(), bytes) : SystemAllocate(bytes);
}

void RawAllocator::Free(void* p, size_t bytes) const {
  if (free != nullptr) {
    free(ctx.get(), p);
  } else {
    SystemFree(static_cast<uint8_t*>(p), bytes);
  }
}

std::shared_ptr<HostPool> HostPool::Create(RawAllocator allocator) {
  return std::shared_ptr<HostPool>(new HostPool(allocator));
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
      p = it->second.back().p;
      it->second.pop_back();
      if (it->second.empty()) free_.erase(it);
      usage_.cached_bytes -= static_cast<int64_t>(size_class);
    }
    usage_.in_use_bytes += static_cast<int64_t>(size_class);
    usage_.peak_bytes = std::max(usage_.peak_bytes, usage_.in_use_bytes);
  }
  if (p == nullptr) {
    p = static_cast<uint8_t*>(allocator_.Allocate(size_class));
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
    } else {
      raw.Free(q, size_class);
    }
  });
}

void HostPool::Release(uint8_t* p, size_t size_class) {
  std::lock_guard<std::mutex> lock(mu_);
  usage_.in_use_bytes -= static_cast<int64_t>(size_class);
  usage_.cached_bytes += static_cast<int64_t>(size_class);
  free_[size_class].push_back(Idle{p, sweeps_});
}

void HostPool::Trim() {
  std::map<size_t, std::vector<Idle>> idle;
  {
    std::lock_guard<std::mutex> lock(mu_);
    idle.swap(free_);
    usage_.cached_bytes = 0;
  }
  for (auto& [size_class, buffers] : idle)
    for (const Idle& b : buffers) allocator_.Free(b.p, size_class);
}

void HostPool::Sweep() {
  std::vector<std::pair<uint8_t*, size_t>> stale;  // buffer, size class
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = free_.begin(); it != free_.end();) {
      std::vector<Idle>& buffers = it->second;
      // Released before the previous sweep and idle since: not taken for a whole sweep period.
      const auto kept = std::partition(buffers.begin(), buffers.end(),
                                       [&](const Idle& b) { return b.sweep == sweeps_; });
      for (auto b = kept; b != buffers.end(); ++b) stale.emplace_back(b->p, it->first);
      usage_.cached_bytes -= static_cast<int64_t>(it->first) * (buffers.end() - kept);
      buffers.erase(kept, buffers.end());
      it = buffers.empty() ? free_.erase(it) : std::next(it);
    }
    ++sweeps_;
  }
  for (const auto& [p, size_class] : stale) allocator_.Free(p, size_class);
}

HostPool::Usage HostPool::usage() const {
  std::lock_guard<std::mutex> lock(mu_);
  return usage_;
}

}  // namespace sluice
