// HostPool: a thread-safe cache of 64-byte-aligned host buffers in size classes.
//
// Loaders allocate the same sizes over and over (encoded files, batch outputs); the pool hands
// freed buffers back out instead of going to the system each time, and reports the bytes in use
// and their peak. A request takes the smallest idle buffer of up to twice its size, so buffers of
// varying sizes (encoded files) are reused and idle memory stays near what was in flight; Trim()
// releases it, Sweep() the part no request has taken for a while. Buffers handed to consumers
// (e.g. through DLPack) return to the pool when the last reference goes, even after the pool's
// owner has been destroyed.
//
// The memory comes from the system (operator new; mapped pages of their own from 64 KiB, which
// return to the system when freed), or from a RawAllocator given at creation (the CUDA path uses
// one that returns page-locked memory for fast, asynchronous uploads).
//
// Thread-safety: all methods may be called from any thread.
#ifndef SLUICE_CORE_HOST_POOL_H_
#define SLUICE_CORE_HOST_POOL_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace sluice {

// Where a pool's buffers come from: without functions, the system (see above); else `allocate`
// (nullptr on failure) and `free`, called with `ctx` (e.g. a BlockAllocator, which every buffer
// then holds alive). Both must be safe to call from any thread.
struct RawAllocator {
  void* (*allocate)(void* ctx, size_t bytes) = nullptr;
  void (*free)(void* ctx, void* p) = nullptr;
  std::shared_ptr<void> ctx;

  void* Allocate(size_t bytes) const;
  void Free(void* p, size_t bytes) const;  // `bytes` as allocated
};

class HostPool : public std::enable_shared_from_this<HostPool> {
 public:
  static std::shared_ptr<HostPool> Create(RawAllocator allocator = {});
  ~HostPool();

  // A buffer of at least `bytes` bytes (contents uninitialized), returned to the pool when the
  // last shared_ptr copy is destroyed: the smallest idle buffer of up to twice the request's
  // size class, else a new one. Returns nullptr if the system is out of memory.
  std::shared_ptr<uint8_t> Allocate(size_t bytes);

  // Frees every cached (idle) buffer.
  void Trim();

  // Frees the idle buffers no Allocate() has taken since the previous Sweep() (or creation).
  // Loaders sweep as each epoch starts: sizes that were asked for once (a rare large file) do
  // not pile up epoch after epoch, and the memory held stays that of the last epoch.
  void Sweep();

  struct Usage {
    int64_t in_use_bytes = 0;   // handed out and not yet returned
    int64_t peak_bytes = 0;     // highest in_use_bytes since creation
    int64_t cached_bytes = 0;   // idle, kept for reuse
  };
  Usage usage() const;

  // The size class a request of `bytes` is rounded up to (exposed for tests).
  static size_t RoundUp(size_t bytes);

 private:
  explicit HostPool(RawAllocator allocator) : allocator_(allocator) {}
  void Release(uint8_t* p, size_t size_class);

  struct Idle {
    uint8_t* p;
    uint64_t sweep;  // sweeps_ when it was released
  };
  const RawAllocator allocator_;
  mutable std::mutex mu_;
  std::map<size_t, std::vector<Idle>> free_;  // size class -> idle buffers, last released last
  uint64_t sweeps_ = 0;
  Usage usage_;
};

}  // namespace sluice

#endif  // SLUICE_CORE_HOST_POOL_H_
