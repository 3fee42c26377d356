// Whether the GPU path admits another batch under its memory budget: only while the budget has
// room for the pool's usage, for what the admitted batches will still allocate at launch (their
// output and colour images, known once they are laid out: batch_layout.h), and for an estimate,
// with a quarter of headroom as batches vary, for the new batch and each admitted one not yet
// laid out.
//
//   InFlightMemory m;   // over the admitted batches: at_launch += laid out ? their bytes : 0,
//                       // unsized += laid out ? 0 : 1
//   if (AdmitsAnother(pool->usage().in_use_bytes, m, largest_batch_bytes, budget)) ...
//
// Thread-safety: pure.
#ifndef SLUICE_PIPELINE_GPU_ADMISSION_H_
#define SLUICE_PIPELINE_GPU_ADMISSION_H_

#include <cstdint>

namespace sluice {

struct InFlightMemory {
  int64_t at_launch = 0;  // bytes the laid-out batches will allocate at launch
  int64_t unsized = 0;    // batches not yet laid out
};

constexpr bool AdmitsAnother(int64_t in_use, const InFlightMemory& m, int64_t estimate, int64_t budget) {
  return in_use + m.at_launch + (m.unsized + 1) * (estimate * 5 / 4) <= budget;
}

}  // namespace sluice

#endif  // SLUICE_PIPELINE_GPU_ADMISSION_H_
