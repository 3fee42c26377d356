// What every fuzz target of the codecs checks beyond "no crash, no sanitizer report": a
// decoder's success means a sane header and pixels that cover what was asked for.
//
// Used only by the *_fuzz.cc targets (built with SLUICE_SANITIZE=fuzz, Clang's libFuzzer).
#ifndef SLUICE_CODEC_FUZZ_CHECK_H_
#define SLUICE_CODEC_FUZZ_CHECK_H_

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "codec/image_info.h"
#include "sluice/status.h"

namespace sluice {

// Larger images are parsed but not decoded: the decode paths are the same, and a fuzzer's
// time is better spent on many small inputs than on a few 100-megapixel ones.
inline constexpr int64_t kFuzzMaxPixels = int64_t{1} << 22;

// Aborts (a finding for libFuzzer) with `what` when `ok` is false.
inline void FuzzRequire(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what);
  std::abort();
}

inline void FuzzCheckHeader(const ImageInfo& info) {
  FuzzRequire(info.width > 0 && info.height > 0, "a header without a size was accepted");
  FuzzRequire(info.orientation >= 1 && info.orientation <= 8, "orientation outside 1..8");
}

inline bool FuzzDecodable(const ImageInfo& info) {
  return static_cast<int64_t>(info.width) * info.height <= kFuzzMaxPixels;
}

// A decoded region lies inside the (scaled) image, covers `roi` and has its RGB8 pixels.
inline void FuzzCheckDecoded(const Rect& got, const Rect& roi, int width, int height,
                             const std::vector<uint8_t>& pixels) {
  FuzzRequire(got.x >= 0 && got.y >= 0 && got.x + got.w <= width && got.y + got.h <= height,
              "decoded region outside the image");
  FuzzRequire(got.x <= roi.x && got.y <= roi.y && got.x + got.w >= roi.x + roi.w &&
                  got.y + got.h >= roi.y + roi.h,
              "decoded region does not cover the request");
  FuzzRequire(pixels.size() >= static_cast<size_t>(got.w) * static_cast<size_t>(got.h) * 3,
              "fewer pixels than the region");
}

// The body of a target for a format decoded whole (PNG, WebP): the header, then, for an image
// small enough, a full decode whose result covers the image.
inline int FuzzWholeImage(const uint8_t* data, size_t size,
                          Result<ImageInfo> (*read_header)(const uint8_t*, size_t),
                          Result<Rect> (*decode)(const uint8_t*, size_t, std::vector<uint8_t>*)) {
  Result<ImageInfo> info = read_header(data, size);
  if (!info.ok()) return 0;
  FuzzCheckHeader(*info);
  if (!FuzzDecodable(*info)) return 0;
  static std::vector<uint8_t> pixels;
  Result<Rect> got = decode(data, size, &pixels);
  const Rect whole{0, 0, info->width, info->height};
  if (got.ok()) FuzzCheckDecoded(*got, whole, info->width, info->height, pixels);
  return 0;
}

}  // namespace sluice

#endif  // SLUICE_CODEC_FUZZ_CHECK_H_
