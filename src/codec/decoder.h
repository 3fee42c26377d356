// ImageDecoder: one entry point for every format sluice reads on the CPU.
//
// Usage per file: ReadHeader(), then (optionally) Decode() with a region chosen from the header.
// JPEG decodes just the region (and downscales in the DCT domain when asked); PNG and WebP
// decode the whole image. GIF, BMP, TIFF and PNM are recognised and refused as unsupported.
//
// Thread-safety: one ImageDecoder per thread (it keeps libjpeg state between files).
#ifndef SLUICE_CODEC_DECODER_H_
#define SLUICE_CODEC_DECODER_H_

#include <cstdint>
#include <vector>

#include "codec/image_info.h"
#include "codec/jpeg_cpu.h"
#include "sluice/status.h"

namespace sluice {

class ImageDecoder {
 public:
  // `data` must stay valid until Decode() returns.
  Result<ImageInfo> ReadHeader(const uint8_t* data, size_t size);

  // RGB8 packed rows of a region covering request.roi; returns that region.
  // REQUIRES: the previous call was a successful ReadHeader().
  Result<Rect> Decode(const DecodeRequest& request, std::vector<uint8_t>* pixels);

 private:
  JpegDecoder jpeg_;
  ImageFormat format_ = ImageFormat::kUnknown;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace sluice

#endif  // SLUICE_CODEC_DECODER_H_
