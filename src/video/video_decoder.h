// VideoDecoder: chosen frames of one video decoded on the CPU with FFmpeg's libavcodec: seek to
// the key frame before the first one wanted, decode forward, hand over each wanted frame as it
// comes out, and seek ahead past groups of pictures that hold none of them. The frames are exactly
// FFmpeg's (PyAV and torchcodec decode the same bytes).
//
//   SLUICE_ASSIGN_OR_RETURN(auto decoder, VideoDecoder::Open("clip.mp4", index));
//   SLUICE_RETURN_IF_ERROR(decoder->Decode(frames, [&](size_t k, const YuvView& picture) {
//     ...  // frames[k]; `picture` is valid during the call
//     return Status::OK();
//   }));
//
// Pictures are 8-bit 4:2:0 (yuv420p, yuvj420p, nv12); other formats are refused by name.
// Errors describe the reason; the caller adds the file's name.
// Thread-safety: one thread at a time; several decoders may run at once.
#ifndef SLUICE_VIDEO_VIDEO_DECODER_H_
#define SLUICE_VIDEO_VIDEO_DECODER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "core/yuv_view.h"
#include "video/demuxer.h"
#include "video/video_index.h"

namespace sluice {

class VideoDecoder {
 public:
  using FrameFn = std::function<Status(size_t k, const YuvView& picture)>;

  // `index`: IndexVideo's for this file, which must outlive the decoder. `threads`: libavcodec's
  // own threads (1: the loader decodes several videos at once instead).
  static Result<std::unique_ptr<VideoDecoder>> Open(const std::string& path, const VideoIndex& index, int threads = 1);
  ~VideoDecoder();
  VideoDecoder(const VideoDecoder&) = delete;
  VideoDecoder& operator=(const VideoDecoder&) = delete;

  // Decodes `frames` (indices into the index's frames, ascending; repeats allowed) and calls `out`
  // for each, in order. Errors: OutOfRange for a frame past the end, CorruptData where the
  // stream is damaged or a wanted frame never comes out (a truncated file), Unsupported for a
  // picture that is not 8-bit 4:2:0, and whatever `out` returns.
  Status Decode(std::span<const int64_t> frames, const FrameFn& out);

 private:
  VideoDecoder(std::unique_ptr<Demuxer> demuxer, const VideoIndex& index, AVCodecContext* codec, AVPacket* packet,
               AVFrame* frame)
      : demuxer_(std::move(demuxer)), index_(index), codec_(codec), packet_(packet), frame_(frame) {}
  enum class Outcome { kDone, kPassed, kEnded };
  // From key frame `key` (a position in the index's keyframes) on, until frames[*next...] have all
  // come out (kDone), a wanted frame was passed over (kPassed: decoding must start earlier) or the
  // file ended (kEnded). `skip_ahead`: seek past groups that hold no wanted frame.
  Result<Outcome> DecodeFrom(size_t key, bool skip_ahead, std::span<const int64_t> frames, size_t* next,
                             const FrameFn& out);
  // Hands the decoded picture (frame `f`) to every wanted frame it is; advances *next.
  Status Deliver(int64_t f, std::span<const int64_t> frames, size_t* next, const FrameFn& out);
  // Sends `packet` (the end of the stream when null) and takes out the pictures the decoder has
  // ready, delivering the wanted ones; true when a wanted frame was passed over.
  Result<bool> Feed(const AVPacket* packet, std::span<const int64_t> frames, size_t* next, const FrameFn& out);

  std::unique_ptr<Demuxer> demuxer_;
  const VideoIndex& index_;
  AVCodecContext* codec_;
  AVPacket* packet_;
  AVFrame* frame_;
};

// The view of an 8-bit 4:2:0 picture, or Unsupported naming its pixel format.
Result<YuvView> PictureView(const FfmpegApi& av, const AVFrame& frame);

}  // namespace sluice

#endif  // SLUICE_VIDEO_VIDEO_DECODER_H_
