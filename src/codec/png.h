// PNG decoding with libspng: 8- and 16-bit, gray, gray+alpha, RGB, RGBA, palette, interlaced.
// Output is RGB8 (alpha dropped as PIL's convert("RGB") drops it; 16-bit samples keep their
// high byte). PNG has no random access, so the whole image is decoded.
//
// Thread-safety: free functions; safe from any thread.
#ifndef SLUICE_CODEC_PNG_H_
#define SLUICE_CODEC_PNG_H_

#include <cstdint>
#include <vector>

#include "codec/image_info.h"
#include "sluice/status.h"

namespace sluice {

Result<ImageInfo> PngReadHeader(const uint8_t* data, size_t size);

// Decodes the whole image into `pixels` (RGB8, packed rows); returns its rectangle.
Result<Rect> PngDecode(const uint8_t* data, size_t size, std::vector<uint8_t>* pixels);

}  // namespace sluice

#endif  // SLUICE_CODEC_PNG_H_
