// libFuzzer target: PNG header and whole-image decode (libspng, 8/16-bit, interlaced).
#include "codec/fuzz_check.h"
#include "codec/png.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return sluice::FuzzWholeImage(data, size, sluice::PngReadHeader, sluice::PngDecode);
}
