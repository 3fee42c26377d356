// WebDataset layout: how the members of a shard make up samples. A member "dir/n0153.left.jpg"
// belongs to the sample keyed "dir/n0153" as its field "left.jpg": the key is the path up to the
// first dot of the last component, the field (its extension) what follows, lowercased, as the
// webdataset library reads them. A sample is a run of consecutive members with one key.
//
//   SplitMemberName("train/n01.jpg")  -> {key "train/n01", ext "jpg"}
//   SplitMemberName("README")         -> nullopt (no extension: not part of a sample)
//   ParseIntLabel(bytes of " 7\n")    -> 7
//
// Thread-safety: free functions, pure.
#ifndef SLUICE_IO_WEBDATASET_LAYOUT_H_
#define SLUICE_IO_WEBDATASET_LAYOUT_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/status.h"

namespace sluice {

struct MemberKey {
  std::string key;  // the sample's key: the path up to the first dot of its last component
  std::string ext;  // the rest, lowercased: "jpg", "seg.png", "cls"
};

// nullopt for a name whose last component has no dot, or starts with one (".hidden"), or ends
// in "/".
std::optional<MemberKey> SplitMemberName(std::string_view name);

// What the loader takes from each sample: the image (the first of `image_exts`, in that order of
// preference, that the sample has) and the label (likewise from `label_exts`; none when empty).
// A label member holds a decimal integer (".cls", ".txt", ...), or, when its extension ends in
// "json", a JSON object whose top-level field `label_field` is an integer.
struct WebDatasetSpec {
  std::vector<std::string> image_exts = {"jpg", "jpeg", "png", "webp"};
  std::vector<std::string> label_exts = {"cls"};
  std::string label_field;  // for JSON label members; REQUIRES: not empty when one may be JSON
};

// "jpg;jpeg;png" -> {"jpg", "jpeg", "png"} (lowercased, a leading dot dropped). InvalidArgument
// naming `what` for an empty item.
Result<std::vector<std::string>> ParseExtList(std::string_view list, const char* what);

// The integer a label member holds: optional ASCII whitespace, an optional sign, decimal digits,
// optional whitespace. CorruptData (saying what it found) otherwise.
Result<int64_t> ParseIntLabel(std::span<const uint8_t> bytes);

}  // namespace sluice

#endif  // SLUICE_IO_WEBDATASET_LAYOUT_H_
