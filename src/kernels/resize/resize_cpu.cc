#include "kernels/resize/resize_cpu.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define SLUICE_RESIZE_X86 1
#endif

namespace sluice {

namespace {

constexpr int kPrecisionBits = kResizePrecisionBits;
constexpr int32_t kHalf = kResizeHalf;
constexpr int kLoBits = 11;  // coefficient split for 16-bit SIMD: c = hi << 11 | lo

// Only degenerate weights (a region clipped to a pixel or two, bicubic, no antialias) come near
// the modulo-2^32 limit of the sums.
inline uint8_t Clip8(uint32_t sum) { return ResizeClip8(sum); }
inline uint32_t Mul(uint8_t pixel, int32_t coef) { return ResizeMul(pixel, coef); }

}  // namespace

void PrepareTaps(const AxisMap& m, Filter f, bool antialias, AxisTaps* t) {
  const int n = m.out_len;
  t->stride = MaxTaps(m, f, antialias);
  t->pair_stride = t->stride + 1;  // 2 words per pair of taps, rounded up
  t->first.resize(static_cast<size_t>(n));
  t->count.resize(static_cast<size_t>(n));
  t->coef.resize(static_cast<size_t>(n) * static_cast<size_t>(t->stride));
  t->pairs.resize(static_cast<size_t>(n) * static_cast<size_t>(t->pair_stride));
  t->weights.resize(static_cast<size_t>(t->stride));
  t->pairs_fit = true;
  for (int k = 0; k < n; ++k) {
    const TapWindow w = ComputeTaps(m, f, antialias, m.ResizedIndex(k), t->weights.data());
    t->first[static_cast<size_t>(k)] = w.first;
    t->count[static_cast<size_t>(k)] = w.count;
    int32_t* c = &t->coef[static_cast<size_t>(k) * static_cast<size_t>(t->stride)];
    for (int i = 0; i < w.count; ++i) {
      const double v = t->weights[static_cast<size_t>(i)] * (1 << kPrecisionBits);
      c[i] = static_cast<int32_t>(v < 0 ? -0.5 + v : 0.5 + v);  // PIL's normalize_coeffs_8bpc
    }
    int32_t* hl = &t->pairs[static_cast<size_t>(k) * static_cast<size_t>(t->pair_stride)];
    for (int p = 0; p < (w.count + 1) / 2; ++p) {
      const int32_t c0 = c[2 * p], c1 = 2 * p + 1 < w.count ? c[2 * p + 1] : 0;
      const int32_t h0 = c0 >> kLoBits, h1 = c1 >> kLoBits;  // floor: lo is in [0, 2^11)
      const int32_t l0 = c0 - h0 * (1 << kLoBits), l1 = c1 - h1 * (1 << kLoBits);
      if (h0 < -32768 || h0 > 32767 || h1 < -32768 || h1 > 32767) t->pairs_fit = false;
      hl[2 * p] = static_cast<int32_t>((static_cast<uint32_t>(h1) << 16) |
                                       (static_cast<uint32_t>(h0) & 0xFFFFu));
      hl[2 * p + 1] = static_cast<int32_t>((static_cast<uint32_t>(l1) << 16) |
                                           static_cast<uint32_t>(l0));
    }
  }
}

namespace {

// Output pixel k of the horizontal pass, portable.
inline void HorizontalPixel(const uint8_t* src, uint8_t* o, const AxisTaps& t, int k,
                            const uint8_t* fill) {
  const int n = t.count[static_cast<size_t>(k)];
  if (n == 0) {
    o[0] = fill[0], o[1] = fill[1], o[2] = fill[2];
    return;
  }
  const uint8_t* s = src + 3 * t.first[static_cast<size_t>(k)];
  const int32_t* c = &t.coef[static_cast<size_t>(k) * static_cast<size_t>(t.stride)];
  uint32_t a0 = kHalf, a1 = kHalf, a2 = kHalf;
  for (int i = 0; i < n; ++i, s += 3) {
    a0 += Mul(s[0], c[i]);
    a1 += Mul(s[1], c[i]);
    a2 += Mul(s[2], c[i]);
  }
  o[0] = Clip8(a0), o[1] = Clip8(a1), o[2] = Clip8(a2);
}

void HorizontalRow(const uint8_t* src, uint8_t* dst, const AxisTaps& t, int out_w, int,
                   const uint8_t* fill) {
  for (int k = 0; k < out_w; ++k) HorizontalPixel(src, dst + 3 * k, t, k, fill);
}

// The resolver of a cloned function runs while the program loads, before ThreadSanitizer's
// runtime starts, and crashes under it: TSan builds keep one version.
#if defined(__SANITIZE_THREAD__)
#define SLUICE_AVX2_CLONES
#else
#define SLUICE_AVX2_CLONES __attribute__((target_clones("avx2", "default")))
#endif

// acc[j] += src[j] * w over one row; cloned for AVX2 (8 lanes of 32-bit multiplies).
SLUICE_AVX2_CLONES void AccumulateRow(const uint8_t* src, int32_t w, uint32_t* acc, int len) {
  for (int j = 0; j < len; ++j) acc[j] += Mul(src[j], w);
}

#ifdef SLUICE_RESIZE_X86
// The horizontal row with SSSE3: pmaddwd on pixel pairs with the (hi, lo) coefficient halves
// gives PIL's exact 32-bit sums as 2^11 * sum(p * hi) + sum(p * lo). A pixel whose 8-byte pair
// loads would run past the end of the row (the last one or two) takes the portable path.
__attribute__((target("ssse3"))) void HorizontalRowSsse3(const uint8_t* src, uint8_t* dst,
                                                         const AxisTaps& t, int out_w, int in_w,
                                                         const uint8_t* fill) {
  // Bytes R0 G0 B0 R1 G1 B1 of two pixels -> 16-bit lanes R0 R1 G0 G1 B0 B1 0 0.
  const __m128i shuf = _mm_setr_epi8(0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1);
  const __m128i half = _mm_set1_epi32(kHalf);
  for (int k = 0; k < out_w; ++k) {
    const int n = t.count[static_cast<size_t>(k)];
    const int first = t.first[static_cast<size_t>(k)];
    const int pairs = (n + 1) / 2;
    uint8_t* o = dst + 3 * k;
    if (n == 0 || 3 * (first + 2 * pairs - 2) + 8 > 3 * in_w) {
      HorizontalPixel(src, o, t, k, fill);
      continue;
    }
    const uint8_t* s = src + 3 * first;
    const int32_t* hl = &t.pairs[static_cast<size_t>(k) * static_cast<size_t>(t.pair_stride)];
    __m128i acc_hi = _mm_setzero_si128(), acc_lo = half;
    for (int p = 0; p < pairs; ++p, s += 6) {
      const __m128i px =
          _mm_shuffle_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(s)), shuf);
      acc_hi = _mm_add_epi32(acc_hi, _mm_madd_epi16(px, _mm_set1_epi32(hl[2 * p])));
      acc_lo = _mm_add_epi32(acc_lo, _mm_madd_epi16(px, _mm_set1_epi32(hl[2 * p + 1])));
    }
    __m128i acc = _mm_add_epi32(_mm_slli_epi32(acc_hi, kLoBits), acc_lo);  // wraps like Mul
    acc = _mm_srai_epi32(acc, kPrecisionBits);
    const __m128i packed = _mm_packus_epi16(_mm_packs_epi32(acc, acc), acc);
    const uint32_t v = static_cast<uint32_t>(_mm_cvtsi128_si32(packed));
    o[0] = static_cast<uint8_t>(v);
    o[1] = static_cast<uint8_t>(v >> 8);
    o[2] = static_cast<uint8_t>(v >> 16);
  }
}

bool CpuHasSsse3() {
  static const bool has = __builtin_cpu_supports("ssse3");
  return has;
}
#endif

}  // namespace

void ResizeCpu(const ResizeParams& p, const ImageView& in, const MutableImageView& out,
               ResizeScratch* s, bool allow_simd) {
  const int out_w = out.width, out_h = out.height;
  const size_t row_bytes = static_cast<size_t>(out_w) * 3;
  PrepareTaps(p.x, p.filter, p.antialias, &s->x);
  PrepareTaps(p.y, p.filter, p.antialias, &s->y);

  auto horizontal_row = &HorizontalRow;
#ifdef SLUICE_RESIZE_X86
  if (allow_simd && s->x.pairs_fit && CpuHasSsse3()) horizontal_row = &HorizontalRowSsse3;
#else
  (void)allow_simd;
#endif

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
      horizontal_row(in.row(y), s->mid.data() + row_bytes * static_cast<size_t>(y - y_lo), s->x,
                     out_w, in.width, p.fill);
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
      uint32_t* acc = s->acc.data();
      const int len = static_cast<int>(row_bytes);
      std::fill(acc, acc + len, static_cast<uint32_t>(kHalf));
      for (int i = 0; i < n; ++i) AccumulateRow(mid_row(first + i), c[i], acc, len);
      for (int j = 0; j < len; ++j) dst[j] = Clip8(acc[j]);
    }
    if (any_x_pad)
      for (int x = 0; x < out_w; ++x)
        if (x_is_pad(x))
          dst[3 * x] = p.fill[0], dst[3 * x + 1] = p.fill[1], dst[3 * x + 2] = p.fill[2];
  }
}

}  // namespace sluice
