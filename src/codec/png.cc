#include "codec/png.h"

#include <spng.h>

#include <memory>

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
  if (static_cast<int64_t>(info.width) * info.height > kMaxImagePixels)
    return CorruptData("image too large: ", info.width, "x", info.height,
                       " pixels exceeds the limit of ", kMaxImagePixels);
  spng_exif exif;
  if (spng_get_exif(ctx.get(), &exif) == 0)
    info.orientation = ExifOrientationFromTiff(reinterpret_cast<const uint8_t*>(exif.data), exif.length);
  return info;
}

Result<Rect> PngDecode(const uint8_t* data, size_t size, std::vector<uint8_t>* pixels) {
  SLUICE_ASSIGN_OR_RETURN(Ctx ctx, Open(data, size));
  spng_ihdr ihdr;
  if (int e = spng_get_ihdr(ctx.get(), &ihdr)) return CorruptData("corrupt PNG header: ", spng_strerror(e));
  // 16-bit files go through RGBA16 (which libspng offers for every color type); the high
  // byte of each sample is kept. Everything else converts straight to RGB8.
  const bool wide16 = ihdr.bit_depth == 16;
  const int fmt = wide16 ? SPNG_FMT_RGBA16 : SPNG_FMT_RGB8;
  size_t out_size = 0;
  if (int e = spng_decoded_image_size(ctx.get(), fmt, &out_size))
    return CorruptData("corrupt PNG: ", spng_strerror(e));
  const size_t w = ihdr.width, h = ihdr.height;
  if (!wide16) {
    pixels->resize(out_size);
    if (int e = spng_decode_image(ctx.get(), pixels->data(), out_size, fmt, 0))
      return CorruptData("corrupt PNG data: ", spng_strerror(e));
  } else {
    std::vector<uint8_t> wide(out_size);
    if (int e = spng_decode_image(ctx.get(), wide.data(), out_size, fmt, 0))
      return CorruptData("corrupt PNG data: ", spng_strerror(e));
    pixels->resize(w * h * 3);
    const uint16_t* in = reinterpret_cast<const uint16_t*>(wide.data());
    uint8_t* out = pixels->data();
    for (size_t i = 0; i < w * h; ++i, in += 4, out += 3) {
      out[0] = static_cast<uint8_t>(in[0] >> 8);
      out[1] = static_cast<uint8_t>(in[1] >> 8);
      out[2] = static_cast<uint8_t>(in[2] >> 8);
    }
  }
  return Rect{0, 0, static_cast<int>(w), static_cast<int>(h)};
}

}  // namespace sluice
