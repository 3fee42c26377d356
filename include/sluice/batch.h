// Batch: what a Loader hands out (see loader.h): the images of one batch, as one tensor or one
// per sample, with their labels and where they came from.
//
// Thread-safety: a plain value; its tensors stay valid after the loader is destroyed.
#ifndef SLUICE_BATCH_H_
#define SLUICE_BATCH_H_

#include <cstdint>
#include <vector>

#include "sluice/tensor.h"
#include "sluice/tensor_list.h"

namespace sluice {

struct Batch {
  // N x 3 x H x W (NCHW) or N x H x W x 3 (NHWC) when the transforms end in a fixed size.
  Tensor images;
  // Otherwise (e.g. Resize(256) alone) one 3 x H x W (or H x W x 3) tensor per sample, and
  // `images` is empty.
  TensorList image_list;
  Tensor labels;                 // N, int64
  std::vector<int64_t> indices;  // dataset index of each sample
  // Per sample, 1 if it is a repeat that fills the last batch (last_batch = kPad), else 0.
  std::vector<uint8_t> padding;
  int64_t epoch = 0;
  int64_t index = 0;             // batch number within the epoch
};

}  // namespace sluice

#endif  // SLUICE_BATCH_H_
