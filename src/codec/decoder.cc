#include "codec/decoder.h"

#include <cctype>
#include <cstdio>
#include <string>

#include "codec/png.h"
#include "codec/webp.h"

namespace sluice {

namespace {
std::string DescribeStart(const uint8_t* d, size_t n) {
  std::string hex, text;
  for (size_t i = 0; i < n && i < 8; ++i) {
    char b[4];
    std::snprintf(b, sizeof(b), "%02x ", d[i]);
    hex += b;
    text += std::isprint(d[i]) ? static_cast<char>(d[i]) : '.';
  }
  if (!hex.empty()) hex.pop_back();
  return hex + " ('" + text + "')";
}
}  // namespace

Result<ImageInfo> ImageDecoder::ReadHeader(const uint8_t* data, size_t size) {
  format_ = ImageFormat::kUnknown;
  data_ = data;
  size_ = size;
  if (size == 0) return CorruptData("empty file");
  const ImageFormat format = SniffFormat(data, size);
  Result<ImageInfo> info = [&]() -> Result<ImageInfo> {
    switch (format) {
      case ImageFormat::kJpeg: return jpeg_.ReadHeader(data, size);
      case ImageFormat::kPng: return PngReadHeader(data, size);
      case ImageFormat::kWebp: return WebpReadHeader(data, size);
      case ImageFormat::kUnknown:
        return CorruptData("not a recognized image format: the file starts with ",
                           DescribeStart(data, size));
      default:
        return Unsupported(ImageFormatName(format), " images are not supported (JPEG, PNG and WebP are)");
    }
  }();
  if (!info.ok()) return info;
  // Before any pixel memory: the same limit for every format.
  if (static_cast<int64_t>(info->width) * info->height > kMaxImagePixels)
    return CorruptData("image too large: ", info->width, "x", info->height, " pixels exceeds the limit of ",
                       kMaxImagePixels);
  format_ = format;
  return info;
}

Result<Rect> ImageDecoder::Decode(const DecodeRequest& request, std::vector<uint8_t>* pixels) {
  const ImageFormat format = format_;
  format_ = ImageFormat::kUnknown;
  switch (format) {
    case ImageFormat::kJpeg: return jpeg_.Decode(request, pixels);
    case ImageFormat::kPng:
      if (request.scale_denom != 1) return InvalidArgument("PNG cannot be decoded downscaled");
      return PngDecode(data_, size_, pixels);
    case ImageFormat::kWebp:
      if (request.scale_denom != 1) return InvalidArgument("WebP cannot be decoded downscaled");
      return WebpDecode(data_, size_, pixels);
    default:
      return FailedPrecondition("ImageDecoder::Decode without a successful ReadHeader");
  }
}

}  // namespace sluice
