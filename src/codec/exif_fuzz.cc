// libFuzzer target: the EXIF orientation parsers (a TIFF-structured block, a JPEG APP1 payload).
#include "codec/exif.h"
#include "codec/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sluice;
  const int tiff = ExifOrientationFromTiff(data, size);
  FuzzRequire(tiff >= 1 && tiff <= 8, "TIFF orientation outside 1..8");
  const int app1 = ExifOrientationFromApp1(data, size);
  FuzzRequire(app1 >= 1 && app1 <= 8, "APP1 orientation outside 1..8");
  return 0;
}
