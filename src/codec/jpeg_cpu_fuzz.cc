// libFuzzer target: the JPEG paths of untrusted bytes on the CPU. The marker walks the GPU path
// uses to route files (end marker, scan count, scan check), the header, and a region decode at
// a DCT scale, with one decoder reused across inputs as a loader's worker reuses it.
// The input's last 9 bytes choose the region and the scale (FuzzedDataProvider reads integers
// from the end); the rest is the file.
#include <fuzzer/FuzzedDataProvider.h>

#include "codec/fuzz_check.h"
#include "codec/jpeg_cpu.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sluice;
  FuzzedDataProvider in(data, size);
  const int scale = 1 << in.ConsumeIntegralInRange(0, 3);
  const uint16_t x = in.ConsumeIntegral<uint16_t>(), y = in.ConsumeIntegral<uint16_t>();
  const uint16_t w = in.ConsumeIntegral<uint16_t>(), h = in.ConsumeIntegral<uint16_t>();
  const std::vector<uint8_t> file = in.ConsumeRemainingBytes<uint8_t>();

  JpegHasEndMarker(file.data(), file.size());
  FuzzRequire(JpegScanCount(file.data(), file.size()) >= 0, "negative scan count");
  JpegScanLooksIntact(file.data(), file.size());

  static JpegDecoder decoder;
  Result<ImageInfo> info = decoder.ReadHeader(file.data(), file.size());
  if (!info.ok()) return 0;
  FuzzCheckHeader(*info);
  if (!FuzzDecodable(*info)) return 0;
  const int sw = ScaledSize(info->width, scale), sh = ScaledSize(info->height, scale);
  Rect roi;
  roi.x = x % sw;
  roi.y = y % sh;
  roi.w = 1 + w % (sw - roi.x);
  roi.h = 1 + h % (sh - roi.y);
  static std::vector<uint8_t> pixels;
  Result<Rect> got = decoder.Decode(DecodeRequest{roi, scale}, &pixels);
  if (got.ok()) FuzzCheckDecoded(*got, roi, sw, sh, pixels);
  return 0;
}
