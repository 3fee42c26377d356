// TensorList: a variable-shape batch, one Tensor per sample, shapes free to differ.
//
// Loaders hand one out when the transforms do not end in a fixed size (e.g. Resize(256) alone),
// so the images of a batch cannot share one N x C x H x W tensor. Each element owns (a share of)
// its memory and exports through DLPack like any Tensor.
//
// Thread-safety: a value; copies share the tensors' memory.
#ifndef SLUICE_TENSOR_LIST_H_
#define SLUICE_TENSOR_LIST_H_

#include <cstdint>
#include <vector>

#include "sluice/tensor.h"

namespace sluice {

class TensorList {
 public:
  TensorList() = default;
  explicit TensorList(std::vector<Tensor> tensors) : tensors_(std::move(tensors)) {}

  int64_t size() const { return static_cast<int64_t>(tensors_.size()); }
  bool empty() const { return tensors_.empty(); }
  // REQUIRES: 0 <= i < size().
  const Tensor& operator[](int64_t i) const { return tensors_[static_cast<size_t>(i)]; }
  const std::vector<Tensor>& tensors() const { return tensors_; }
  size_t nbytes() const {
    size_t n = 0;
    for (const Tensor& t : tensors_) n += t.nbytes();
    return n;
  }

 private:
  std::vector<Tensor> tensors_;
};

}  // namespace sluice

#endif  // SLUICE_TENSOR_LIST_H_
