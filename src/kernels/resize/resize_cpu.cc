#include "kernels/resize/resize_cpu.h"

#include <algorithm>
#include <cstring>

namespace sluice {

namespace {

constexpr int kPrecisionBits = 32 - 8 - 2;  // PIL's PRECISION_BITS
constexpr int32_t kHalf = 1 << (kPrecisionBits - 1);

inline uint8_t Clip8(int32_t v) {
  v >>= kPrecisionBits;
  return static_cast<uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v));
}

void PrepareTaps(const AxisMap& m, Filter f, bool antialias, AxisTaps* t) {
  const int n = m.out_len;
  t->stride = MaxTaps(m, f, antialias);
  t->first.resize(static_cast<size_t>(n));
  t->count.resize(static_cast<size_t>(n));
  t->coef.resize(static_cast<size_t>(n) * static_cast<size_t>(t->stride));
  t->weights.resize(static_cast<size_t>(t->stride));
  for (int k = 0; k < n; ++k) {
    const TapWindow w = ComputeTaps(m, f, antialias, m.ResizedIndex(k), t->weights.data());
    t->first[static_cast<size_t>(k)] = w.first;
    t->count[static_cast<size_t>(k)] = w.count;
    int32_t* c = &t->coef[static_cast<size_t>(k) * static_cast<size_t>(t->stride)];
    for (int i = 0; i < w.count; ++i) {
      const double v = t->weights[static_cast<size_t>(i)] * (1 << kPrecisionBits);
      c[i] = static_cast<int32_t>(v < 0 ? -0.5 + v : 0.5 + v);  // PIL's normalize_coeffs_8bpc
    }
  }
}

// One output row of the horizontal pass.
void HorizontalRow(const uint8_t* src, uint8_t* dst, const AxisTaps& t, int out_w,
                   const uint8_t* fill) {
  for (int k = 0; k < out_w; ++k) {
    const int n = t.count[static_cast<size_t>(k)];
    uint8_t* o = dst + 3 * k;
    if (n == 0) {
      o[0] = fill[0], o[1] = fill[1], o[2] = fill[2];
      continue;
    }
    const uint8_t* s = src + 3 * t.first[static_cast<size_t>(k)];
    const int32_t* c = &t.coef[static_cast<size_t>(k) * static_cast<size_t>(t.stride)];
    int32_t a0 = kHalf, a1 = kHalf, a2 = kHalf;
    for (int i = 0; i < n; ++i, s += 3) {
      a0 += s[0] * c[i];
      a1 += s[1] * c[i];
      a2 += s[2] * c[i];
    }
    o[0] = Clip8(a0), o[1] = Clip8(a1), o[2] = Clip8(a2);
  }
}

}  // namespace

void ResizeCpu(const ResizeParams& p, const ImageView& in, const MutableImageView& out,
               ResizeScratch* s) {
  const int out_w = out.width, out_h = out.height;
  const size_t row_bytes = static_cast<size_t>(out_w) * 3;
  PrepareTaps(p.x, p.filter, p.antialias, &s->x);
  PrepareTaps(p.y, p.filter, p.antialias, &s->y);

  // Input rows the vertical pass reads.
  int y_lo = in.height, y_hi = 0;
  for (int k = 0; k < out_h; ++k) {
    const int n = s->y.count[static_cast<size_t>(k)];
    if (n == 0) continue;
    y_lo = std::min(y_lo, s->y.first[static_cast<size_t>(k)]);
    y_hi = std::max(y_hi, s->y.first[static_cast<size_t>(k)] + n);
  }
  const bool any_x_pad = p.x.out_off < 0 || p.x.out_off + p.x.out_len > p.x.resized_len;
  const bool x_identity = p.x.identity && !p.x.flip && !any_x_pad;
  if (y_lo < y_hi && !x_identity) {
    s->mid.resize(row_bytes * static_cast<size_t>(y_hi - y_lo));
    for (int y = y_lo; y < y_hi; ++y)
      HorizontalRow(in.row(y), s->mid.data() + row_bytes * static_cast<size_t>(y - y_lo), s->x,
                    out_w, p.fill);
  }
  // Row y of the horizontal pass's output (an 8-bit image, as in PIL).
  auto mid_row = [&](int y) -> const uint8_t* {
    if (x_identity) return in.row(y) + 3 * (static_cast<int>(p.x.origin) + p.x.out_off);
    return s->mid.data() + row_bytes * static_cast<size_t>(y - y_lo);
  };
  // Columns that are padding in x keep the fill whatever the vertical pass computes.
  auto x_is_pad = [&](int k) {
    const int r = p.x.ResizedIndex(k);
    return r < 0 || r >= p.x.resized_len;
  };

  s->acc.resize(row_bytes);
  for (int k = 0; k < out_h; ++k) {
    uint8_t* dst = out.row(k);
    const int n = s->y.count[static_cast<size_t>(k)];
    if (n == 0) {
      for (int x = 0; x < out_w; ++x)
        dst[3 * x] = p.fill[0], dst[3 * x + 1] = p.fill[1], dst[3 * x + 2] = p.fill[2];
      continue;
    }
    const int first = s->y.first[static_cast<size_t>(k)];
    if (p.y.identity) {
      std::memcpy(dst, mid_row(first), row_bytes);
    } else {
      const int32_t* c = &s->y.coef[static_cast<size_t>(k) * static_cast<size_t>(s->y.stride)];
      int32_t* acc = s->acc.data();
      const int len = static_cast<int>(row_bytes);
      for (int j = 0; j < len; ++j) acc[j] = kHalf;
      for (int i = 0; i < n; ++i) {
        const uint8_t* src = mid_row(first + i);
        const int32_t w = c[i];
        for (int j = 0; j < len; ++j) acc[j] += src[j] * w;
      }
      for (int j = 0; j < len; ++j) dst[j] = Clip8(acc[j]);
    }
    if (any_x_pad)
      for (int x = 0; x < out_w; ++x)
        if (x_is_pad(x)) dst[3 * x] = p.fill[0], dst[3 * x + 1] = p.fill[1], dst[3 * x + 2] = p.fill[2];
  }
}

}  // namespace sluice
