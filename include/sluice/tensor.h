// Tensor: a dense, row-major array with shared ownership of its memory, and its DLPack export.
//
// A Tensor is a view plus an owner: copies share the same memory, which is released (or returned
// to the pool it came from) when the last copy and the last DLPack export are gone.
//
// Thread-safety: a Tensor value may be copied and read from any thread; writing the elements
// concurrently is the caller's business.
#ifndef SLUICE_TENSOR_H_
#define SLUICE_TENSOR_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "sluice/dlpack.h"
#include "sluice/status.h"
#include "sluice/types.h"

namespace sluice {

// How a consumer uses a tensor in GPU memory that the producer fills asynchronously.
class DeviceSync {
 public:
  virtual ~DeviceSync() = default;
  // Makes work queued on `stream` from now on wait until the contents are ready, and keeps the
  // memory from being reused until the work queued on `stream` before its release has finished.
  // `stream` is a cudaStream_t, or 1 / 2 for the legacy / per-thread default stream (DLPack's
  // convention).
  virtual Status ConsumeOn(uintptr_t stream) = 0;
};

class Tensor {
 public:
  Tensor() = default;
  // Wraps `data` (kept alive by `owner`) as a compact row-major tensor.
  // `sync` is set for device tensors written asynchronously (see DeviceSync).
  Tensor(std::shared_ptr<void> owner, void* data, std::vector<int64_t> shape, DType dtype,
         Device device = {}, std::shared_ptr<DeviceSync> sync = nullptr);

  // Allocates a CPU tensor with operator new (64-byte aligned); contents are uninitialized.
  static Tensor Empty(std::vector<int64_t> shape, DType dtype);

  void* data() const { return data_; }
  template <typename T>
  T* data_as() const { return static_cast<T*>(data_); }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t dim(int i) const { return shape_[static_cast<size_t>(i)]; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  DType dtype() const { return dtype_; }
  Device device() const { return device_; }
  // For a CUDA tensor: call sync()->ConsumeOn(stream) before reading it on `stream` (the Python
  // binding does this in __dlpack__). nullptr for CPU tensors.
  const std::shared_ptr<DeviceSync>& sync() const { return sync_; }
  int64_t numel() const;
  size_t nbytes() const { return static_cast<size_t>(numel()) * DTypeSize(dtype_); }

  // A new DLManagedTensor that shares this tensor's memory. The consumer must call its deleter
  // exactly once; the memory stays valid until then, even if every Tensor copy is gone.
  DLManagedTensor* ToDLPack() const;
  // The same as DLPack 1.0's versioned form, writable by the consumer (flags 0).
  DLManagedTensorVersioned* ToDLPackVersioned() const;

 private:
  std::shared_ptr<void> owner_;
  void* data_ = nullptr;
  std::vector<int64_t> shape_;
  DType dtype_ = DType::kUInt8;
  Device device_;
  std::shared_ptr<DeviceSync> sync_;
};

}  // namespace sluice

#endif  // SLUICE_TENSOR_H_
