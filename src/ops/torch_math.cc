#include "ops/torch_math.h"

namespace sluice {

float LinspaceF32(double start, double end, int n, int i) {
  const float s = static_cast<float>(start), e = static_cast<float>(end);
  if (n == 1) return s;
  const float step = (e - s) / static_cast<float>(n - 1);
  return i < n / 2 ? std::fmaf(step, static_cast<float>(i), s) : std::fmaf(-step, static_cast<float>(n - 1 - i), e);
}

}  // namespace sluice
