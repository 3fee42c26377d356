// ClipSource: video clips as a loader's samples. Each video is indexed once when the source is
// made (VideoIndex, several videos at a time; kept in Options::index_cache between runs); ClipLayout numbers the clips, so that the loader's
// schedule shuffles, shards, resumes and applies on_error to clips as it does to images. A clip
// is not read as bytes: the loader's video path decodes it (DecodeClips) on a compute thread,
// the clips of a batch that share a video in one pass, so that a group of pictures two clips
// need is decoded once.
//
//   SLUICE_ASSIGN_OR_RETURN(auto clips, ClipSource::Create(videos, classes, {.length = 16, .stride = 2}, opts));
//   clips->size();                         // clips per epoch
//   for (const std::vector<int>& group : clips->GroupByVideo(batch, seed, epoch, 4))  // positions
//     clips->DecodeClips(group_indices, seed, epoch, [&](size_t j, int k, const YuvView& frame) { ... });
//
// Videos that cannot be indexed (missing, damaged, audio-only, a codec FFmpeg lacks) or are
// shorter than one clip fail Create naming the file and the reason, or, with `skip_bad`, hold no
// clip and are listed by skipped().
// Thread-safety: immutable after Create; DecodeClips and every accessor may run on many threads.
#ifndef SLUICE_VIDEO_CLIP_SOURCE_H_
#define SLUICE_VIDEO_CLIP_SOURCE_H_

#include <functional>
#include <memory>
#include <span>
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
  using ClipFrameFn = std::function<Status(size_t j, int k, const YuvView& frame)>;

  // `videos`: (path, label) of each video. Errors: InvalidArgument for an empty list or a bad
  // spec, no clip at all, or (without skip_bad) a video shorter than one clip; the indexing
  // errors of a video (IndexVideo), each naming the file.
  static Result<std::shared_ptr<const ClipSource>> Create(std::vector<Sample> videos, std::vector<std::string> classes,
                                                          const ClipSpec& spec, const Options& options);

  int64_t size() const override { return layout_.num_clips(); }
  int64_t label(int64_t index) const override { return videos_[VideoOf(index)].label; }
  std::string name(int64_t index) const override { return videos_[VideoOf(index)].path; }
  // Clips are decoded (DecodeClips), not read: Unsupported.
  Result<SampleBytes> Read(int64_t index, const ByteAllocator& memory, int64_t max_bytes) const override;
  uint64_t Digest() const override;
  const std::vector<std::string>& classes() const override { return classes_; }

  const ClipSpec& spec() const { return spec_; }
  int frames_per_clip() const { return spec_.length; }
  // The clip `index` of `epoch` (its video and frames; random starts drawn from seed and epoch).
  Clip ClipAt(int64_t index, uint64_t seed, int64_t epoch) const;
  // The clips `indices` (all of one video: GroupByVideo) decoded in one pass over the video, each
  // picture once however many clips want it: out(j, k, frame) for frame k of clip indices[j]
  // (k = 0 .. frames_per_clip() - 1), in the video's order. On the CPU, or with `nvdec_stream` (a
  // cudaStream_t) on the current GPU's NVDEC, the pictures then in device memory
  // (VideoDecoder::OpenNvdec, keeping its decoder in `nvdec_slot`); where NVDEC refuses the video
  // (Unsupported: its codec, format or size), on the CPU after all, the pictures in host memory
  // (YuvView::device tells). Where that pass fails, each clip is decoded again on its own (its
  // frames may then come twice), so that each gets its own status: the decoder's error, naming
  // the frames; the caller adds name().
  struct Decoded {
    std::vector<Status> status;  // per clip
    int64_t pictures = 0;        // pictures the decoder put out (VideoDecoder::pictures)
  };
  Decoded DecodeClips(std::span<const int64_t> indices, uint64_t seed, int64_t epoch,
                                  const ClipFrameFn& out, void* nvdec_stream = nullptr,
                                  NvdecDecoderSlot* nvdec_slot = nullptr) const;
  // `indices`' positions grouped by video (in order of first appearance), each video's clips in
  // the order they start and cut into runs of at most `max_group`: neighbouring clips, which share
  // the most pictures, go together, and a batch still gives several groups to decode at once.
  std::vector<std::vector<int>> GroupByVideo(std::span<const int64_t> indices, uint64_t seed, int64_t epoch,
                                             int max_group) const;

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
  // Decodes `frames` (ascending, repeats allowed) of video `video`: out(e, picture) for frames[e].
  // Adds the pictures decoded to *pictures.
  Status DecodeFrames(size_t video, std::span<const int64_t> frames,
                      const std::function<Status(size_t e, const YuvView&)>& out, void* nvdec_stream,
                      NvdecDecoderSlot* nvdec_slot, int64_t* pictures) const;

  std::vector<Sample> videos_;
  std::vector<std::string> classes_;
  std::vector<VideoIndex> indexes_;  // empty frames for a video left out
  ClipSpec spec_;
  ClipLayout layout_;
  std::vector<std::pair<std::string, std::string>> skipped_;
};

}  // namespace sluice

#endif  // SLUICE_VIDEO_CLIP_SOURCE_H_
