// libFuzzer target: the entry every file goes through, format sniffing and ImageDecoder (the
// pixel limit for every format, then a full decode), with one decoder reused across inputs.
#include "codec/decoder.h"
#include "codec/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sluice;
  SniffFormat(data, size);
  static ImageDecoder decoder;
  Result<ImageInfo> info = decoder.ReadHeader(data, size);
  if (!info.ok()) return 0;
  FuzzCheckHeader(*info);
  FuzzRequire(static_cast<int64_t>(info->width) * info->height <= kMaxImagePixels,
              "a header over the pixel limit was accepted");
  if (!FuzzDecodable(*info)) return 0;
  static std::vector<uint8_t> pixels;
  const Rect whole{0, 0, info->width, info->height};
  Result<Rect> got = decoder.Decode(DecodeRequest{whole, 1}, &pixels);
  if (got.ok()) FuzzCheckDecoded(*got, whole, info->width, info->height, pixels);
  return 0;
}
