// libFuzzer target: a shard's bytes through the tar reader and the WebDataset index (grouping,
// labels from .cls and from a JSON field), as a shard from the network would arrive.
#include <cstdio>
#include <cstdlib>

#include "io/tar_test_util.h"
#include "io/webdataset_index.h"

namespace {
void Require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what);
  std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sluice;
  testing::MemoryInput in(std::vector<uint8_t>(data, data + size));
  TarReader tar(&in, "fuzz.tar");
  WebDatasetSpec spec;
  spec.label_exts = {"cls", "json"};
  spec.label_field = "label";
  const ShardIndex index = IndexShard(&tar, spec);
  for (const ShardSample& s : index.samples) {
    if (!s.problem.empty()) continue;
    Require(s.offset >= 512 && s.size >= 0, "a usable sample without its image's place");
    Require(s.offset + s.size <= static_cast<int64_t>(size), "an image past the end of the shard");
    Require(!s.key.empty() && !s.image_ext.empty(), "a usable sample without key or image");
  }
  Require(index.damage.ok() || !index.damage.message().empty(), "damage without a message");
  return 0;
}
