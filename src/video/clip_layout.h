// ClipLayout: the clips an epoch takes from a set of videos, numbered 0..num_clips()-1 so that a
// loader's sampler shuffles and shards them as it does images: every clip exactly once per epoch
// over all ranks (EpochSchedule), resumable, elastic. A clip is `length` frames `stride` frames
// apart: it spans (length - 1) * stride + 1 frames, all of one video.
//
//   kEveryClip    (DALI's readers.video, the default) clips start at frames 0, step, 2 step, ...
//                 while the whole clip fits
//   kRandomClips  (torchcodec's random sampler) `per_video` clips of each video per epoch, each
//                 start uniform among those that fit, drawn from the clip's own random stream
//                 (seed, epoch, clip number): the same clips whatever the ranks and threads
// A video shorter than one clip has no clips (short_videos() lists them, for on_error).
//
//   Result<ClipLayout> layout = ClipLayout::Create({.length = 16, .stride = 2, .step = 32}, frames);
//   Clip c = layout->At(i, seed, epoch);   // video and first frame of clip i; c.Frame(k)
//
// Thread-safety: immutable after Create; any thread may read it.
#ifndef SLUICE_VIDEO_CLIP_LAYOUT_H_
#define SLUICE_VIDEO_CLIP_LAYOUT_H_

#include <cstdint>
#include <vector>

#include "sluice/status.h"

namespace sluice {

enum class ClipPolicy { kEveryClip, kRandomClips };

struct ClipSpec {
  int length = 16;       // frames per clip (sequence_length)
  int stride = 1;        // frames between a clip's frames
  int step = 16;         // kEveryClip: frames between clip starts
  ClipPolicy policy = ClipPolicy::kEveryClip;
  int per_video = 1;     // kRandomClips: clips per video per epoch
  int64_t span() const { return int64_t{length - 1} * stride + 1; }
};

struct Clip {
  int64_t video = 0;
  int64_t first = 0;  // its first frame (presentation order)
  int stride = 1;
  int length = 0;
  int64_t Frame(int k) const { return first + int64_t{k} * stride; }
};

class ClipLayout {
 public:
  // `frames`: each video's frame count. InvalidArgument naming the field for a length, stride,
  // step or per_video below 1, or a negative frame count.
  static Result<ClipLayout> Create(const ClipSpec& spec, std::vector<int64_t> frames);

  int64_t num_clips() const { return first_clip_.back(); }
  int64_t clips_of(int64_t video) const {
    return first_clip_[static_cast<size_t>(video) + 1] - first_clip_[static_cast<size_t>(video)];
  }
  // Clip i of `epoch` (its start drawn for kRandomClips). REQUIRES: 0 <= i < num_clips().
  Clip At(int64_t i, uint64_t seed, uint64_t epoch) const;
  // The videos shorter than one clip.
  std::vector<int64_t> short_videos() const;

  // The random stream op of a clip's start (kRandomClips), beside the transforms' ops.
  static constexpr uint32_t kClipStream = 0xFFFFFFFEu;

 private:
  ClipLayout(ClipSpec spec, std::vector<int64_t> frames);
  ClipSpec spec_;
  std::vector<int64_t> frames_;
  std::vector<int64_t> first_clip_;  // clip number of each video's first clip; the total last
};

}  // namespace sluice

#endif  // SLUICE_VIDEO_CLIP_LAYOUT_H_
