// VideoDecoder: chosen frames of one video: seek to the key frame before the first one wanted,
// decode forward, hand over each wanted frame as it comes out, and seek ahead past groups of
// pictures that hold none of them. The decoding itself is a PictureSource's: libavcodec on the CPU
// (Open: the frames are exactly FFmpeg's, as PyAV and torchcodec decode them) or the GPU's video
// engines (OpenNvdec: NV12 pictures in device memory).
//
//   SLUICE_ASSIGN_OR_RETURN(auto decoder, VideoDecoder::Open("clip.mp4", index));
//   SLUICE_RETURN_IF_ERROR(decoder->Decode(frames, [&](size_t k, const YuvView& picture) {
//     ...  // frames[k]; `picture` is valid during the call
//     return Status::OK();
//   }));
//
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
#include "video/picture_source.h"
#include "video/video_index.h"

namespace sluice {

struct NvdecDecoderSlot;  // video/nvdec_pictures.h

class VideoDecoder {
 public:
  using FrameFn = std::function<Status(size_t k, const YuvView& picture)>;

  // On the CPU. `index`: IndexVideo's for this file, which must outlive the decoder. `threads`:
  // libavcodec's own threads (1: the loader decodes several videos at once instead).
  static Result<std::unique_ptr<VideoDecoder>> Open(const std::string& path, const VideoIndex& index, int threads = 1);
  // On NVDEC, the current CUDA device's video engines; pictures are mapped on `stream` (a
  // cudaStream_t), and `out` may queue work on it that reads the picture: it is waited for before
  // the picture is released. `slot` (a decode session's, or null) keeps the NVDEC decoder for the
  // next video. FailedPrecondition without the CUDA path, a GPU or libnvcuvid; Unsupported for a
  // codec, format or size the engines do not decode.
  static Result<std::unique_ptr<VideoDecoder>> OpenNvdec(const std::string& path, const VideoIndex& index,
                                                         void* stream, NvdecDecoderSlot* slot = nullptr);
  VideoDecoder(std::unique_ptr<Demuxer> demuxer, const VideoIndex& index, std::unique_ptr<PictureSource> pictures);
  ~VideoDecoder();
  VideoDecoder(const VideoDecoder&) = delete;
  VideoDecoder& operator=(const VideoDecoder&) = delete;

  // Decodes `frames` (indices into the index's frames, ascending; repeats allowed) and calls `out`
  // for each, in order. Errors: OutOfRange for a frame past the end, CorruptData where the
  // stream is damaged or a wanted frame never comes out (a truncated file), Unsupported for a
  // picture that is not 8-bit 4:2:0, and whatever `out` returns.
  Status Decode(std::span<const int64_t> frames, const FrameFn& out);
  // Pictures the decoder has put out so far, wanted or not: the work behind the frames handed over.
  int64_t pictures() const { return pictures_decoded_; }

 private:
  enum class Outcome { kDone, kPassed, kEnded };
  // From key frame `key` (a position in the index's keyframes) on, until frames[*next...] have all
  // come out (kDone), a wanted frame was passed over (kPassed: decoding must start earlier) or the
  // file ended (kEnded). `skip_ahead`: seek past groups that hold no wanted frame.
  Result<Outcome> DecodeFrom(size_t key, bool skip_ahead, std::span<const int64_t> frames, size_t* next,
                             const FrameFn& out);
  // Sends `packet` (null: the end of the stream) and hands the wanted pictures that come out to
  // `out`, advancing *next; true when a wanted frame was passed over.
  Result<bool> Feed(AVPacket* packet, std::span<const int64_t> frames, size_t* next, const FrameFn& out);
  Status SeekTo(size_t key);

  std::unique_ptr<Demuxer> demuxer_;
  const VideoIndex& index_;
  std::unique_ptr<PictureSource> pictures_;
  AVPacket* packet_;
  int64_t pictures_decoded_ = 0;
};

}  // namespace sluice

#endif  // SLUICE_VIDEO_VIDEO_DECODER_H_
