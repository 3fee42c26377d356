// libFuzzer target: PNG header and whole-image decode (libspng, 8/16-bit, interlaced).
#include "codec/fuzz_check.h"
#include "codec/png.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sluice;
  Result<ImageInfo> info = PngReadHeader(data, size);
  if (!info.ok()) return 0;
  FuzzCheckHeader(*info);
  if (!FuzzDecodable(*info)) return 0;
  static std::vector<uint8_t> pixels;
  Result<Rect> got = PngDecode(data, size, &pixels);
  const Rect whole{0, 0, info->width, info->height};
  if (got.ok()) FuzzCheckDecoded(*got, whole, info->width, info->height, pixels);
  return 0;
}
