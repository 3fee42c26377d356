#include "video/clip_layout.h"

#include <algorithm>
#include <utility>

#include "core/rng.h"

namespace sluice {

Result<ClipLayout> ClipLayout::Create(const ClipSpec& spec, std::vector<int64_t> frames) {
  const std::pair<const char*, int> fields[] = {
      {"sequence_length", spec.length}, {"stride", spec.stride}, {"step", spec.step}, {"clips_per_video", spec.per_video}};
  for (const auto& [name, value] : fields)
    if (value < 1) return InvalidArgument(name, " must be >= 1, got ", value);
  for (size_t v = 0; v < frames.size(); ++v)
    if (frames[v] < 0) return InvalidArgument("video ", v, " has a negative frame count (", frames[v], ")");
  return ClipLayout(spec, std::move(frames));
}

ClipLayout::ClipLayout(ClipSpec spec, std::vector<int64_t> frames) : spec_(spec), frames_(std::move(frames)) {
  first_clip_.reserve(frames_.size() + 1);
  first_clip_.push_back(0);
  const int64_t span = spec_.span();
  for (int64_t f : frames_) {
    int64_t n = 0;
    if (f >= span) n = spec_.policy == ClipPolicy::kEveryClip ? (f - span) / spec_.step + 1 : spec_.per_video;
    first_clip_.push_back(first_clip_.back() + n);
  }
}

Clip ClipLayout::At(int64_t i, uint64_t seed, uint64_t epoch) const {
  // The video whose clips include i: the last one whose first clip is at most i.
  const auto it = std::upper_bound(first_clip_.begin(), first_clip_.end(), i);
  const int64_t video = (it - first_clip_.begin()) - 1;
  const int64_t k = i - first_clip_[static_cast<size_t>(video)];
  Clip c{video, 0, spec_.stride, spec_.length};
  if (spec_.policy == ClipPolicy::kEveryClip) {
    c.first = k * spec_.step;
  } else {
    SampleRng rng(seed, epoch, static_cast<uint64_t>(i), kClipStream);
    c.first = rng.RandInt(0, frames_[static_cast<size_t>(video)] - spec_.span() + 1);
  }
  return c;
}

std::vector<int64_t> ClipLayout::short_videos() const {
  std::vector<int64_t> out;
  for (size_t v = 0; v < frames_.size(); ++v)
    if (frames_[v] < spec_.span()) out.push_back(static_cast<int64_t>(v));
  return out;
}

}  // namespace sluice
