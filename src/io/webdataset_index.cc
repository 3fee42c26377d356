#include "io/webdataset_index.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <unordered_set>
#include <utility>

#include "core/json_field.h"

namespace sluice {

namespace {

bool EndsWith(const std::string& s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string Joined(const std::vector<std::string>& exts) {
  std::string out;
  for (const std::string& e : exts) out += (out.empty() ? "." : ", .") + e;
  return out;
}

// The members of one key seen so far.
class Group {
 public:
  Group(std::string key, const WebDatasetSpec& spec) : spec_(spec) { sample_.key = std::move(key); }
  const std::string& key() const { return sample_.key; }

  // Member `m` (extension `ext`) of this sample; its data is read here when it is a label, and
  // by `on_image` (when set) when it is the best image so far.
  Status Add(const TarMember& m, const std::string& ext, TarReader* tar, int64_t ordinal,
             const std::function<Status(int64_t, const TarMember&, TarReader*)>& on_image) {
    if (std::find(exts_.begin(), exts_.end(), ext) != exts_.end()) {
      Problem("the member " + m.name + " appears twice");
      return Status::OK();
    }
    exts_.push_back(ext);
    const auto image = std::find(spec_.image_exts.begin(), spec_.image_exts.end(), ext);
    if (image != spec_.image_exts.end()) {
      const int rank = static_cast<int>(image - spec_.image_exts.begin());
      if (rank < image_rank_) {
        image_rank_ = rank;
        sample_.image_ext = ext;
        sample_.offset = m.data_offset;
        sample_.size = m.size;
        if (on_image) SLUICE_RETURN_IF_ERROR(on_image(ordinal, m, tar));
      }
    }
    const auto label = std::find(spec_.label_exts.begin(), spec_.label_exts.end(), ext);
    if (label == spec_.label_exts.end()) return Status::OK();
    const int rank = static_cast<int>(label - spec_.label_exts.begin());
    if (rank >= label_rank_) return Status::OK();
    label_rank_ = rank;
    if (m.size > kMaxLabelMemberBytes) {
      label_ = CorruptData("the label member ", m.name, " is ", m.size, " bytes (at most ", kMaxLabelMemberBytes, ")");
      return Status::OK();
    }
    std::vector<uint8_t> data(static_cast<size_t>(m.size));
    SLUICE_RETURN_IF_ERROR(tar->ReadData(data));
    label_ = EndsWith(ext, "json") ? JsonIntField(data, spec_.label_field) : ParseIntLabel(data);
    if (!label_.ok()) label_ = label_.status().WithPrefix(m.name);
    return Status::OK();
  }

  void Problem(std::string what) {
    if (sample_.problem.empty()) sample_.problem = std::move(what);
  }

  ShardSample Finish() && {
    if (sample_.image_ext.empty())
      Problem("no image member (looked for " + Joined(spec_.image_exts) + "; found " + Joined(exts_) + ")");
    if (!spec_.label_exts.empty()) {
      if (label_rank_ == kNone) Problem("no label member (looked for " + Joined(spec_.label_exts) + ")");
      else if (!label_.ok()) Problem(label_.status().message());
      else sample_.label = *label_;
    }
    return std::move(sample_);
  }

 private:
  static constexpr int kNone = 1 << 30;
  const WebDatasetSpec& spec_;
  ShardSample sample_;
  std::vector<std::string> exts_;
  int image_rank_ = kNone, label_rank_ = kNone;
  Result<int64_t> label_ = int64_t{-1};
};

}  // namespace

Status WalkShard(TarReader* tar, const WebDatasetSpec& spec, const ShardWalkHooks& hooks) {
  std::unordered_set<std::string> done;  // keys of finished samples
  std::optional<Group> group;
  int64_t ordinal = 0;
  // Hands out the sample in progress; false when the hook stops the walk.
  auto finish = [&] {
    if (!group) return true;
    const bool again = !done.insert(group->key()).second;
    if (again) group->Problem("a duplicate key: an earlier sample of this shard has it");
    const bool go_on = hooks.sample(ordinal++, std::move(*group).Finish());
    group.reset();
    return go_on;
  };
  for (;;) {
    Result<std::optional<TarMember>> next = tar->Next();
    if (!next.ok()) return next.status();  // the sample in progress may be cut short: the damage stands for it
    if (!*next) break;
    const TarMember& m = **next;
    std::optional<MemberKey> name = SplitMemberName(m.name);
    if (!name) continue;  // no extension: not part of a sample (as the webdataset library)
    if (group && group->key() != name->key && !finish()) return Status::OK();
    if (!group) group.emplace(name->key, spec);
    // An error here: its label (or image) was cut short, and the damage names it.
    SLUICE_RETURN_IF_ERROR(group->Add(m, name->ext, tar, ordinal, hooks.image));
  }
  finish();
  return Status::OK();
}

ShardIndex IndexShard(TarReader* tar, const WebDatasetSpec& spec) {
  ShardIndex out;
  ShardWalkHooks hooks;
  hooks.sample = [&](int64_t, ShardSample&& sample) {
    out.samples.push_back(std::move(sample));
    return true;
  };
  out.damage = WalkShard(tar, spec, hooks);
  return out;
}

}  // namespace sluice
