// Where an element of one output sample lies: a sample's slot holds h x w x 3 elements, laid out
// as the batch's layout says (NCHW: planes; NHWC: interleaved).
//
// Thread-safety: pure functions.
#ifndef SLUICE_CORE_SLOT_H_
#define SLUICE_CORE_SLOT_H_

#include <cstdint>

#include "core/hd.h"
#include "sluice/types.h"

namespace sluice {

// Element offset of (c, y, x) in one sample's slot of h x w x 3.
SLUICE_HD int64_t SlotOffset(Layout layout, int h, int w, int c, int y, int x) {
  return layout == Layout::kNCHW ? (static_cast<int64_t>(c) * h + y) * w + x
                                 : (static_cast<int64_t>(y) * w + x) * 3 + c;
}

}  // namespace sluice

#endif  // SLUICE_CORE_SLOT_H_
