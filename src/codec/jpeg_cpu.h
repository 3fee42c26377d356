// JPEG decoding on the CPU with libjpeg-turbo: header peek, region-of-interest decode
// (jpeg_crop_scanline / jpeg_skip_scanlines) and DCT-domain downscaling (1/2, 1/4, 1/8).
//
// Output is always RGB8 HWC: grayscale is replicated, CMYK/YCCK is converted as PIL's
// convert("RGB") does (Adobe files store inverted CMYK). EXIF orientation is reported, not
// applied (the caller rotates the decoded region).
//
// Errors name the reason only; the caller adds the file name. Libjpeg's data-corruption
// warnings (truncated data, bad Huffman codes, lost sync) are errors here. When a region stops
// above the last row, the rest of the entropy data is not decoded; truncation is still caught by
// checking for the end-of-image marker, but damage below the region goes unnoticed.
//
// A progressive file of more than kMaxJpegScans scans is refused while it decodes (CorruptData):
// thousands of tiny scans would take minutes.
//
// Thread-safety: a JpegDecoder is used by one thread at a time; use one per worker.
#ifndef SLUICE_CODEC_JPEG_CPU_H_
#define SLUICE_CODEC_JPEG_CPU_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "codec/image_info.h"
#include "sluice/status.h"

namespace sluice {

inline constexpr int kMaxJpegScans = 100;

class JpegDecoder {
 public:
  JpegDecoder();
  ~JpegDecoder();
  JpegDecoder(const JpegDecoder&) = delete;
  JpegDecoder& operator=(const JpegDecoder&) = delete;

  // Parses the header. `data` must stay valid until Decode() returns.
  Result<ImageInfo> ReadHeader(const uint8_t* data, size_t size);

  // Decodes `request` from the image whose header was read last, as RGB8 rows packed in
  // `pixels` (resized as needed). Returns the region decoded, in the scaled stored image: it
  // covers request.roi and may start further left (libjpeg aligns columns to iMCU boundaries).
  // REQUIRES: the previous call was a successful ReadHeader().
  Result<Rect> Decode(const DecodeRequest& request, std::vector<uint8_t>* pixels);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// True if an end-of-image marker (FF D9) appears within the last 64 KiB: a file without one is
// truncated (the CPU decoder reports it; the GPU path sends such files to the CPU decoder).
bool JpegHasEndMarker(const uint8_t* data, size_t size);

// The number of scans (SOS markers) a JPEG's marker walk finds, without decoding: the GPU path
// sends files of more than kMaxJpegScans to the CPU decoder, which refuses them.
int JpegScanCount(const uint8_t* data, size_t size);

// For a single-scan (baseline) JPEG: true if its entropy-coded data holds only the byte
// sequences a scan may (FF 00 stuffing, restart markers, fill bytes) and ends at an end-of-image
// marker. Damaged scan data usually breaks this; the GPU path sends such files to the CPU
// decoder, which names the damage (nvJPEG would decode it to garbage without a word).
bool JpegScanLooksIntact(const uint8_t* data, size_t size);

// Encodes RGB (channels 3) or grayscale (channels 1) pixels as a baseline or progressive JPEG.
// subsampling: "444", "422" or "420" (ignored for grayscale). `exif_orientation` 2..8 adds an
// EXIF APP1 block with that tag (1 adds none). Used by the dataset generator, the tests and the
// hardware decoder's tiny pads (codec/nvjpeg_decoders.h).
Result<std::vector<uint8_t>> EncodeJpeg(const ImageView& image, int quality,
                                        const char* subsampling, bool progressive,
                                        int exif_orientation = 1);

}  // namespace sluice

#endif  // SLUICE_CODEC_JPEG_CPU_H_
