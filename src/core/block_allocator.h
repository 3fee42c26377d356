// BlockAllocator: memory reserved in a few large blocks and handed out in pieces, for memory that
// is costly to get one buffer at a time (page-locked memory: each cudaHostAlloc pins pages and
// maps them for the GPU, and cudaFreeHost waits for the device).
//
//   auto blocks = std::make_shared<BlockAllocator>(PinnedAllocator(), 32 << 20);
//   auto pool = HostPool::Create(blocks->AsRawAllocator(blocks));  // pieces, pooled by size
//
// A piece comes from the first block with room at its end; a block whose pieces have all been
// freed starts over from its beginning. Blocks grow geometrically (each new one at least the
// size of all before it), so a loader makes a handful of block allocations in its life; all of
// them go back to `base` when the allocator is destroyed, not before.
//
// Thread-safety: Allocate and Free may be called from any thread; Free never calls `base` (a CUDA
// host callback may free a piece). Lifetime: destroy it where `base.free` may run (for page-locked
// memory, not in a host callback); AsRawAllocator's pieces keep it alive.
// REQUIRES: min_block_bytes > 0; every piece is freed before the allocator is destroyed.
#ifndef SLUICE_CORE_BLOCK_ALLOCATOR_H_
#define SLUICE_CORE_BLOCK_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "core/host_pool.h"

namespace sluice {

class BlockAllocator {
 public:
  BlockAllocator(RawAllocator base, size_t min_block_bytes);
  ~BlockAllocator();
  BlockAllocator(const BlockAllocator&) = delete;
  BlockAllocator& operator=(const BlockAllocator&) = delete;

  // A piece of at least `bytes` bytes, 64-byte aligned; nullptr when `base` is out of memory.
  void* Allocate(size_t bytes);
  // Returns a piece from Allocate.
  void Free(void* p);

  // Reserves the first block now (where a caller would rather pay for it than its first reader).
  bool Reserve();

  size_t reserved_bytes() const;  // in blocks, in use or not
  int blocks() const;

  // A RawAllocator over `self` (which must be this allocator); every piece holds it alive.
  static RawAllocator AsRawAllocator(const std::shared_ptr<BlockAllocator>& self);

 private:
  struct Block {
    uint8_t* base;
    size_t bytes;
    size_t used = 0;  // from the start: the next piece begins here
    int live = 0;     // pieces handed out and not yet freed
  };
  Block* NewBlock(size_t at_least);  // REQUIRES: mu_ held

  const RawAllocator base_;
  const size_t min_block_bytes_;
  mutable std::mutex mu_;
  std::vector<Block> blocks_;  // in the order they were reserved
  size_t reserved_ = 0;
};

}  // namespace sluice

#endif  // SLUICE_CORE_BLOCK_ALLOCATOR_H_
