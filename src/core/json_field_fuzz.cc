// libFuzzer target: JsonIntField on any bytes (a label member of a downloaded shard).
#include <cstdio>
#include <cstdlib>

#include "core/json_field.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const sluice::Result<int64_t> v = sluice::JsonIntField({data, size}, "label");
  if (!v.ok() && v.status().message().empty()) {
    std::fprintf(stderr, "fuzz invariant broken: an error without a message\n");
    std::abort();
  }
  return 0;
}
