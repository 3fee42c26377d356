#include "codec/webp.h"

#include <webp/decode.h>

namespace sluice {

Result<ImageInfo> WebpReadHeader(const uint8_t* data, size_t size) {
  if (size == 0) return CorruptData("empty file");
  WebPBitstreamFeatures f;
  if (WebPGetFeatures(data, size, &f) != VP8_STATUS_OK) return CorruptData("corrupt WebP header");
  if (f.has_animation) return Unsupported("animated WebP is not supported");
  ImageInfo info;
  info.format = ImageFormat::kWebp;
  info.width = f.width;
  info.height = f.height;
  info.components = f.has_alpha ? 4 : 3;
  return info;
}

Result<Rect> WebpDecode(const uint8_t* data, size_t size, std::vector<uint8_t>* pixels) {
  SLUICE_ASSIGN_OR_RETURN(ImageInfo info, WebpReadHeader(data, size));
  const size_t stride = static_cast<size_t>(info.width) * 3;
  pixels->resize(stride * static_cast<size_t>(info.height));
  if (WebPDecodeRGBInto(data, size, pixels->data(), pixels->size(), static_cast<int>(stride)) ==
      nullptr)
    return CorruptData("corrupt or truncated WebP data");
  return Rect{0, 0, info.width, info.height};
}

}  // namespace sluice
