// libFuzzer target: WebP header and whole-image decode (libwebp, lossy and lossless).
#include "codec/fuzz_check.h"
#include "codec/webp.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return sluice::FuzzWholeImage(data, size, sluice::WebpReadHeader, sluice::WebpDecode);
}
