#include "codec/png.h"

#include <spng.h>

#include <memory>
#include <vector>

#include "codec/exif.h"

namespace sluice {

namespace {

struct CtxDeleter {
  void operator()(spng_ctx* c) const { spng_ctx_free(c); }
};
using Ctx = std::unique_ptr<spng_ctx, CtxDeleter>;

Result<Ctx> Open(const uint8_t* data, size_t size) {
  if (size == 0) return CorruptData("empty file");
  Ctx ctx(spng_ctx_new(0));
  if (!ctx) return ResourceExhausted("cannot create a PNG decoder");
  // Refuse decompression bombs the same way as oversized JPEGs.
  spng_set_image_limits(ctx.get(), 1u << 24, 1u << 24);
  spng_set_chunk_limits(ctx.get(), 64u << 20, 256u << 20);
  if (int e = spng_set_png_buffer(ctx.get(), data, size))
    return CorruptData("corrupt PNG: ", spng_strerror(e));
  return ctx;
}

}  // namespace

Result<ImageInfo> PngReadHeader(const uint8_t* data, size_t size) {
  SLUICE_ASSIGN_OR_RETURN(Ctx ctx, Open(data, size));
  spng_ihdr ihdr;
  if (int e = spng_get_ihdr(ctx.get(), &ihdr)) return CorruptData("corrupt PNG header: ", spng_strerror(e));
  ImageInfo info;
  info.format = ImageFormat::kPng;
  info.width = static_cast<int>(ihdr.width);
  info.height = static_cast<int>(ihdr.height);
  switch (ihdr.color_type) {
    case SPNG_COLOR_TYPE_GRAYSCALE: info.components = 1; break;
    case SPNG_COLOR_TYPE_GRAYSCALE_ALPHA: info.components = 2; break;
    case SPNG_COLOR_TYPE_TRUECOLOR_ALPHA: info.components = 4; break;
    default: info.components = 3; break;
  }
  spng_exif exif;
  if (spng_get_exif(ctx.get(), &exif) == 0)
    info.orientation = ExifOrientationFromTiff(reinterpret_cast<const uint8_t*>(exif.data), exif.length);
  return info;
}

namespace {

// Adam7's first column and column step per pass: spng_decode_row writes only those of a row.
constexpr int kPassStartX[7] = {0, 4, 0, 2, 0, 1, 0};
constexpr int kPassStepX[7] = {8, 8, 4, 4, 2, 2, 1};

// 16-bit files, a row at a time through RGBA16 (which libspng offers for every color type),
// keeping the high byte of each sample: the image's memory is its RGB8 output and one wide row.
Status DecodeWideRows(spng_ctx* ctx, const spng_ihdr& ihdr, uint8_t* out) {
  const size_t w = ihdr.width;
  std::vector<uint16_t> row(w * 4);
  if (int e = spng_decode_image(ctx, nullptr, 0, SPNG_FMT_RGBA16, SPNG_DECODE_PROGRESSIVE))
    return CorruptData("corrupt PNG data: ", spng_strerror(e));
  const bool interlaced = ihdr.interlace_method != SPNG_INTERLACE_NONE;
  for (;;) {
    spng_row_info info;
    int e = spng_get_row_info(ctx, &info);
    if (e == SPNG_EOI) return Status::OK();
    if (e == 0) e = spng_decode_row(ctx, row.data(), row.size() * sizeof(uint16_t));
    if (e != 0 && e != SPNG_EOI) return CorruptData("corrupt PNG data: ", spng_strerror(e));
    const size_t first = interlaced ? static_cast<size_t>(kPassStartX[info.pass]) : 0;
    const size_t step = interlaced ? static_cast<size_t>(kPassStepX[info.pass]) : 1;
    uint8_t* dst = out + static_cast<size_t>(info.row_num) * w * 3;
    for (size_t x = first; x < w; x += step)
      for (size_t c = 0; c < 3; ++c) dst[x * 3 + c] = static_cast<uint8_t>(row[x * 4 + c] >> 8);
    if (e == SPNG_EOI) return Status::OK();
  }
}

}  // namespace

Result<Rect> PngDecode(const uint8_t* data, size_t size, std::vector<uint8_t>* pixels) {
  SLUICE_ASSIGN_OR_RETURN(Ctx ctx, Open(data, size));
  spng_ihdr ihdr;
  if (int e = spng_get_ihdr(ctx.get(), &ihdr)) return CorruptData("corrupt PNG header: ", spng_strerror(e));
  const size_t w = ihdr.width, h = ihdr.height;
  pixels->resize(w * h * 3);
  if (ihdr.bit_depth == 16) {
    SLUICE_RETURN_IF_ERROR(DecodeWideRows(ctx.get(), ihdr, pixels->data()));
  } else if (int e = spng_decode_image(ctx.get(), pixels->data(), pixels->size(), SPNG_FMT_RGB8, 0)) {
    return CorruptData("corrupt PNG data: ", spng_strerror(e));
  }
  return Rect{0, 0, static_cast<int>(w), static_cast<int>(h)};
}

}  // namespace sluice
