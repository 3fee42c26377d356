// EXIF orientation (tag 0x0112) from the metadata blocks image files carry.
#ifndef SLUICE_CODEC_EXIF_H_
#define SLUICE_CODEC_EXIF_H_

#include <cstddef>
#include <cstdint>

namespace sluice {

// Orientation from a TIFF-structured EXIF block ("II*\0..." or "MM\0*..."): 1..8, or 1 when
// the tag is absent or the block is malformed (never reads out of bounds).
int ExifOrientationFromTiff(const uint8_t* data, size_t size);

// The same from a JPEG APP1 payload, which starts with "Exif\0\0".
int ExifOrientationFromApp1(const uint8_t* data, size_t size);

}  // namespace sluice

#endif  // SLUICE_CODEC_EXIF_H_
