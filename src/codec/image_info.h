// What a decoder learns from a file's header, and what a caller asks it to decode.
//
// Coordinates: `width`/`height` are the stored (encoded) size. EXIF orientation 5..8 swaps them
// for display; DisplaySize() gives the size users see (what PIL's exif_transpose produces).
#ifndef SLUICE_CODEC_IMAGE_INFO_H_
#define SLUICE_CODEC_IMAGE_INFO_H_

#include <cstddef>
#include <cstdint>

#include "core/image_view.h"

namespace sluice {

enum class ImageFormat : uint8_t { kUnknown, kJpeg, kPng, kWebp, kGif, kBmp, kTiff, kPnm };
const char* ImageFormatName(ImageFormat format);  // "JPEG", "PNG", ...

// Identifies the format from the first bytes.
ImageFormat SniffFormat(const uint8_t* data, size_t size);

struct ImageInfo {
  ImageFormat format = ImageFormat::kUnknown;
  int width = 0, height = 0;  // stored size
  int orientation = 1;        // EXIF orientation, 1..8 (1 = as stored)
  int components = 3;         // channels in the file: 1 gray, 3 color, 4 CMYK or RGBA
  bool progressive = false;   // JPEG only
  // JPEG chroma subsampling as "444", "422", "420", "440", "411", "gray" or "other".
  const char* subsampling = "other";

  bool transposed() const { return orientation >= 5; }
  int display_width() const { return transposed() ? height : width; }
  int display_height() const { return transposed() ? width : height; }
};

// Largest DCT-domain downscale denominator a format supports (8 for JPEG, 1 otherwise).
int MaxScaleDenom(ImageFormat format);

// Size of a stored dimension after downscaling by 1/denom (libjpeg's rounding: up).
inline int ScaledSize(int size, int denom) { return (size + denom - 1) / denom; }

// What to decode: `roi` in stored coordinates of the image downscaled by 1/scale_denom.
struct DecodeRequest {
  Rect roi;
  int scale_denom = 1;  // 1, 2, 4 or 8; REQUIRES <= MaxScaleDenom(format)
};

// Pixels larger than this (width x height as stored) are refused, as PIL refuses them
// (its DecompressionBombError threshold).
inline constexpr int64_t kMaxImagePixels = 178956970;

}  // namespace sluice

#endif  // SLUICE_CODEC_IMAGE_INFO_H_
