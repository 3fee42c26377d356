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

struct DLPackContext {
  Tensor tensor;  // keeps the memory alive
  std::vector<int64_t> shape;
  DLManagedTensor managed;
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

}  // namespace

DLManagedTensor* Tensor::ToDLPack() const {
  auto* ctx = new DLPackContext{*this, shape_, {}};
  DLTensor& t = ctx->managed.dl_tensor;
  t.data = data_;
  t.device.device_type = device_.type == DeviceType::kCPU ? kDLCPU : kDLCUDA;
  t.device.device_id = device_.type == DeviceType::kCPU ? 0 : device_.index;
  t.ndim = ndim();
  t.dtype = ToDLDataType(dtype_);
  t.shape = ctx->shape.data();
  t.strides = nullptr;
  t.byte_offset = 0;
  ctx->managed.manager_ctx = ctx;
  ctx->managed.deleter = [](DLManagedTensor* self) {
    delete static_cast<DLPackContext*>(self->manager_ctx);
  };
  return &ctx->managed;
}

}  // namespace sluice
