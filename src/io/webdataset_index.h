// IndexShard: the samples of one WebDataset shard (webdataset_layout.h), found in one pass over
// its members: where each image's bytes lie, and each label, read from its member. Works on any
// ByteInput (a local file, a download), never going back.
//
//   FileInput in;  SLUICE_RETURN_IF_ERROR(in.Open(path));
//   TarReader tar(&in, path);
//   ShardIndex index = IndexShard(&tar, spec);   // index.samples, index.damage
//
// A sample that cannot be used keeps its place with a `problem` (no image, no label, a label
// that is not an integer, a field twice, a key an earlier sample of the shard had), so that the
// loader's on_error decides what happens to it, and its name says which one it is. Damage to
// the archive itself (truncated, a corrupt header) ends the walk: the samples before it are
// kept, the damage is returned beside them.
//
// WalkShard does the same walk for a stream, handing out each sample as it passes.
//
// Thread-safety: pure functions of their input.
#ifndef SLUICE_IO_WEBDATASET_INDEX_H_
#define SLUICE_IO_WEBDATASET_INDEX_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "io/tar_reader.h"
#include "io/webdataset_layout.h"
#include "sluice/status.h"

namespace sluice {

struct ShardSample {
  std::string key;
  std::string image_ext;  // the image member's extension; empty when the sample has none
  int64_t offset = -1;    // of the image's data in the shard
  int64_t size = 0;
  int64_t label = -1;
  std::string problem;    // why the sample cannot be used; empty when it can
};

struct ShardIndex {
  std::vector<ShardSample> samples;
  Status damage;  // CorruptData / IOError from the walk, naming the shard and the byte
};

// Label members larger than this are a problem, not read.
inline constexpr int64_t kMaxLabelMemberBytes = int64_t{1} << 20;

ShardIndex IndexShard(TarReader* tar, const WebDatasetSpec& spec);

// The same walk for a reader that takes the samples as they pass (a stream, which cannot go
// back for an image): `image` (optional) is called for each image member that is, so far, the
// best of its sample, which is the `ordinal`-th of the shard (from 0); it may read the member's
// data (tar->ReadData), and an error from it ends the walk. `sample` gets each sample once its
// members have passed, and returns false to stop the walk there. Returns the damage that ended
// the walk (OK at the end of the archive, or when stopped).
struct ShardWalkHooks {
  std::function<Status(int64_t ordinal, const TarMember& member, TarReader* tar)> image;
  std::function<bool(int64_t ordinal, ShardSample&& sample)> sample;
};
Status WalkShard(TarReader* tar, const WebDatasetSpec& spec, const ShardWalkHooks& hooks);

}  // namespace sluice

#endif  // SLUICE_IO_WEBDATASET_INDEX_H_
