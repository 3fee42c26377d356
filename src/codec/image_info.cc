#include "codec/image_info.h"

#include <cstring>

namespace sluice {

const char* ImageFormatName(ImageFormat format) {
  switch (format) {
    case ImageFormat::kJpeg: return "JPEG";
    case ImageFormat::kPng: return "PNG";
    case ImageFormat::kWebp: return "WebP";
    case ImageFormat::kGif: return "GIF";
    case ImageFormat::kBmp: return "BMP";
    case ImageFormat::kTiff: return "TIFF";
    case ImageFormat::kPnm: return "PNM";
    case ImageFormat::kUnknown: break;
  }
  return "unknown";
}

ImageFormat SniffFormat(const uint8_t* d, size_t n) {
  if (n >= 3 && d[0] == 0xFF && d[1] == 0xD8 && d[2] == 0xFF) return ImageFormat::kJpeg;
  if (n >= 8 && std::memcmp(d, "\x89PNG\r\n\x1a\n", 8) == 0) return ImageFormat::kPng;
  if (n >= 12 && std::memcmp(d, "RIFF", 4) == 0 && std::memcmp(d + 8, "WEBP", 4) == 0)
    return ImageFormat::kWebp;
  if (n >= 4 && std::memcmp(d, "GIF8", 4) == 0) return ImageFormat::kGif;
  if (n >= 2 && d[0] == 'B' && d[1] == 'M') return ImageFormat::kBmp;
  if (n >= 4 && (std::memcmp(d, "II*\0", 4) == 0 || std::memcmp(d, "MM\0*", 4) == 0))
    return ImageFormat::kTiff;
  if (n >= 2 && d[0] == 'P' && d[1] >= '1' && d[1] <= '7') return ImageFormat::kPnm;
  return ImageFormat::kUnknown;
}

int MaxScaleDenom(ImageFormat format) { return format == ImageFormat::kJpeg ? 8 : 1; }

}  // namespace sluice
