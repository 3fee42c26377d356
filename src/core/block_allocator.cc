#include "core/block_allocator.h"

#include <algorithm>
#include <utility>

#include "sluice/status.h"

namespace sluice {

namespace {
constexpr size_t kPieceAlign = 64;
size_t AlignUp(size_t n) { return (n + kPieceAlign - 1) / kPieceAlign * kPieceAlign; }
}  // namespace

BlockAllocator::BlockAllocator(RawAllocator base, size_t min_block_bytes)
    : base_(std::move(base)), min_block_bytes_(AlignUp(min_block_bytes)) {
  SLUICE_CHECK(min_block_bytes > 0);
}

BlockAllocator::~BlockAllocator() {
  for (const Block& b : blocks_) base_.Free(b.base, b.bytes);
}

BlockAllocator::Block* BlockAllocator::NewBlock(size_t at_least) {
  const size_t bytes = AlignUp(std::max({at_least, min_block_bytes_, reserved_}));
  auto* p = static_cast<uint8_t*>(base_.Allocate(bytes));
  if (p == nullptr) return nullptr;
  blocks_.push_back(Block{p, bytes});
  reserved_ += bytes;
  return &blocks_.back();
}

bool BlockAllocator::Reserve() {
  std::lock_guard<std::mutex> lock(mu_);
  return !blocks_.empty() || NewBlock(0) != nullptr;
}

void* BlockAllocator::Allocate(size_t bytes) {
  bytes = AlignUp(std::max<size_t>(bytes, 1));
  std::lock_guard<std::mutex> lock(mu_);
  Block* block = nullptr;
  for (Block& b : blocks_) {
    if (b.bytes - b.used >= bytes) {
      block = &b;
      break;
    }
  }
  if (block == nullptr && (block = NewBlock(bytes)) == nullptr) return nullptr;
  void* p = block->base + block->used;
  block->used += bytes;
  ++block->live;
  return p;
}

void BlockAllocator::Free(void* p) {
  auto* q = static_cast<uint8_t*>(p);
  std::lock_guard<std::mutex> lock(mu_);
  for (Block& b : blocks_) {
    if (q >= b.base && q < b.base + b.bytes) {
      SLUICE_CHECK(b.live > 0);
      if (--b.live == 0) b.used = 0;  // every piece is back: the block starts over
      return;
    }
  }
  SLUICE_CHECK(false, "BlockAllocator::Free: not a piece of this allocator");
}

size_t BlockAllocator::reserved_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reserved_;
}

int BlockAllocator::blocks() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(blocks_.size());
}

RawAllocator BlockAllocator::AsRawAllocator(const std::shared_ptr<BlockAllocator>& self) {
  return RawAllocator{[](void* ctx, size_t bytes) { return static_cast<BlockAllocator*>(ctx)->Allocate(bytes); },
                      [](void* ctx, void* p) { static_cast<BlockAllocator*>(ctx)->Free(p); }, self};
}

}  // namespace sluice
