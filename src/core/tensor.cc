#include "sluice/tensor.h"

#include <new>

namespace sluice {

Tensor::Tensor(std::shared_ptr<void> owner, void* data, std::vector<int64_t> shape, DType dtype,
               Device device, std::shared_ptr<DeviceSync> sync)
    : owner_(std::move(owner)), data_(data), shape_(std::move(shape)), dtype_(dtype),
      device_(device), sync_(std::move(sync)) {}

Tensor Tensor::Empty(std::vector<int64_t> shape, DType dtype) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  size_t bytes = static_cast<size_t>(n) * DTypeSize(dtype);
  void* p = ::operator new(bytes == 0 ? 1 : bytes, std::align_val_t(64));
  std::shared_ptr<void> owner(p, [](void* q) { ::operator delete(q, std::align_val_t(64)); });
  return Tensor(std::move(owner), p, std::move(shape), dtype);
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape_) n *= d;
  return n;
}

namespace {

template <typename Managed>
struct DLPackContext {
  Tensor tensor;  // keeps the memory alive
  std::vector<int64_t> shape;
  Managed managed;
};

DLDataType ToDLDataType(DType dtype) {
  switch (dtype) {
    case DType::kUInt8: return DLDataType{kDLUInt, 8, 1};
    case DType::kInt64: return DLDataType{kDLInt, 64, 1};
    case DType::kFloat16: return DLDataType{kDLFloat, 16, 1};
    case DType::kFloat32: return DLDataType{kDLFloat, 32, 1};
  }
  return DLDataType{kDLUInt, 8, 1};
}

// A context holding a copy of `tensor` and a Managed (either DLPack form) describing it.
template <typename Managed>
Managed* NewManaged(const Tensor& tensor, void* data, DType dtype) {
  auto* ctx = new DLPackContext<Managed>{tensor, tensor.shape(), {}};
  DLTensor& t = ctx->managed.dl_tensor;
  const Device device = tensor.device();
  t.data = data;
  t.device.device_type = device.type == DeviceType::kCPU ? kDLCPU : kDLCUDA;
  t.device.device_id = device.type == DeviceType::kCPU ? 0 : device.index;
  t.ndim = static_cast<int32_t>(ctx->shape.size());
  t.dtype = ToDLDataType(dtype);
  t.shape = ctx->shape.data();
  t.strides = nullptr;
  t.byte_offset = 0;
  ctx->managed.manager_ctx = ctx;
  ctx->managed.deleter = [](Managed* self) { delete static_cast<DLPackContext<Managed>*>(self->manager_ctx); };
  return &ctx->managed;
}

}  // namespace

DLManagedTensor* Tensor::ToDLPack() const { return NewManaged<DLManagedTensor>(*this, data_, dtype_); }

DLManagedTensorVersioned* Tensor::ToDLPackVersioned() const {
  DLManagedTensorVersioned* m = NewManaged<DLManagedTensorVersioned>(*this, data_, dtype_);
  m->version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
  m->flags = 0;  // writable, not a copy
  return m;
}

}  // namespace sluice
