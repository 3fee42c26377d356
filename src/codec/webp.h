// WebP decoding with libwebp (lossy and lossless, still images). Output RGB8, alpha dropped.
//
// Thread-safety: free functions; safe from any thread.
#ifndef SLUICE_CODEC_WEBP_H_
#define SLUICE_CODEC_WEBP_H_

#include <cstdint>
#include <vector>

#include "codec/image_info.h"
#include "sluice/status.h"

namespace sluice {

Result<ImageInfo> WebpReadHeader(const uint8_t* data, size_t size);

// Decodes the whole image into `pixels` (RGB8, packed rows); returns its rectangle.
Result<Rect> WebpDecode(const uint8_t* data, size_t size, std::vector<uint8_t>* pixels);

}  // namespace sluice

#endif  // SLUICE_CODEC_WEBP_H_
