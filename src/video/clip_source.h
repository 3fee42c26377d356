// ClipSource: video clips as a loader's samples. Each video is indexed once when the source is
// made (VideoIndex, several videos at a time; kept in Options::index_cache between runs); ClipLayout numbers the clips, so that the loader's
// schedule shuffles, shards, resumes and applies on_error to clips as it does to images. A clip
// is not read as bytes: the loader's video path decodes it (DecodeClip) on a compute thread.
//
//   SLUICE_ASSIGN_OR_RETURN(auto clips, ClipSource::Create(videos, classes, {.length = 16, .stride = 2}, opts));
//   clips->size();                         // clips per epoch
//   clips->DecodeClip(i, seed, epoch, [&](int k, const YuvView& frame) { ...; return Status::OK(); });
//
// Videos that cannot be indexed (missing, damaged, audio-only, a codec FFmpeg lacks) or are
// shorter than one clip fail Create naming the file and the reason, or, with `skip_bad`, hold no
// clip and are listed by skipped().
// Thread-safety: immutable after Create; DecodeClip and every accessor may run on many threads.
#ifndef SLUICE_VIDEO_CLIP_SOURCE_H_
#define SLUICE_VIDEO_CLIP_SOURCE_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/yuv_view.h"
#include "sluice/source.h"
#include "video/clip_layout.h"
#include "video/video_index.h"

namespace sluice {

struct NvdecDecoderSlot;  // video/nvdec_pictures.h

class ClipSource : public Source {
 public:
  struct Options {
    bool skip_bad = false;    // leave out bad and short videos (skipped()) rather than fail
    int threads = 4;          // videos indexed at once
    std::string index_cache;  // a folder keeping each video's index between runs; empty: none
  };
  using FrameFn = std::function<Status(int k, const YuvView& frame)>;

  // `videos`: (path, label) of each video. Errors: InvalidArgument for an empty list or a bad
  // spec, no clip at all, or (without skip_bad) a video shorter than one clip; the indexing
  // errors of a video (IndexVideo), each naming the file.
  static Result<std::shared_ptr<const ClipSource>> Create(std::vector<Sample> videos, std::vector<std::string> classes,
                                                          const ClipSpec& spec, const Options& options);

  int64_t size() const override { return layout_.num_clips(); }
  int64_t label(int64_t index) const override { return videos_[VideoOf(index)].label; }
  std::string name(int64_t index) const override { return videos_[VideoOf(index)].path; }
  // Clips are decoded (DecodeClip), not read: Unsupported.
  Result<SampleBytes> Read(int64_t index, const ByteAllocator& memory, int64_t max_bytes) const override;
  uint64_t Digest() const override;
  const std::vector<std::string>& classes() const override { return classes_; }

  const ClipSpec& spec() const { return spec_; }
  int frames_per_clip() const { return spec_.length; }
  // The clip `index` of `epoch` (its video and frames; random starts drawn from seed and epoch).
  Clip ClipAt(int64_t index, uint64_t seed, int64_t epoch) const;
  // Decodes that clip's frames in order, calling `out` for each (k = 0 .. frames_per_clip() - 1):
  // on the CPU, or with `nvdec_stream` (a cudaStream_t) on the current GPU's NVDEC, the pictures
  // then in device memory (VideoDecoder::OpenNvdec, keeping its decoder in `nvdec_slot`). Errors:
  // the decoder's, naming the frames; the caller adds name().
  Status DecodeClip(int64_t index, uint64_t seed, int64_t epoch, const FrameFn& out, void* nvdec_stream = nullptr,
                    NvdecDecoderSlot* nvdec_slot = nullptr) const;

  const std::vector<Sample>& videos() const { return videos_; }
  const VideoIndex& index_of(size_t video) const { return indexes_[video]; }
  // (path, reason) of each video left out (skip_bad).
  const std::vector<std::pair<std::string, std::string>>& skipped() const { return skipped_; }

 private:
  ClipSource(std::vector<Sample> videos, std::vector<std::string> classes, std::vector<VideoIndex> indexes,
             ClipSpec spec, ClipLayout layout, std::vector<std::pair<std::string, std::string>> skipped)
      : videos_(std::move(videos)), classes_(std::move(classes)), indexes_(std::move(indexes)), spec_(spec),
        layout_(std::move(layout)), skipped_(std::move(skipped)) {}
  size_t VideoOf(int64_t index) const { return static_cast<size_t>(layout_.At(index, 0, 0).video); }

  std::vector<Sample> videos_;
  std::vector<std::string> classes_;
  std::vector<VideoIndex> indexes_;  // empty frames for a video left out
  ClipSpec spec_;
  ClipLayout layout_;
  std::vector<std::pair<std::string, std::string>> skipped_;
};

}  // namespace sluice

#endif  // SLUICE_VIDEO_CLIP_SOURCE_H_
