// Demuxer: the packets of a file's video stream through FFmpeg's libavformat (MP4, MKV, WebM,
// AVI, MPEG-TS, ...), in decode order, with seeking to a key frame. The first piece of every
// video path: VideoIndex lists what the packets hold, the decoders turn them into pictures.
//
//   SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Demuxer> demuxer, Demuxer::Open("clip.mp4"));
//   AVPacket* packet = ...;
//   while (true) { SLUICE_ASSIGN_OR_RETURN(bool more, demuxer->Next(packet)); if (!more) break; ... }
//
// Errors describe the reason; the caller adds the file's name.
// Thread-safety: one thread at a time.
#ifndef SLUICE_VIDEO_DEMUXER_H_
#define SLUICE_VIDEO_DEMUXER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "video/ffmpeg_api.h"

namespace sluice {

class Demuxer {
 public:
  // `probe`: also read the start of the streams to fill in what the container's header leaves out
  // (slower; needed for containers without a header, such as MPEG-TS). Errors: NotFound, IOError,
  // CorruptData (not a container FFmpeg recognizes, a missing MP4 `moov` atom), Unsupported (no
  // video stream: an audio-only file), FailedPrecondition (no FFmpeg on this machine). A codec
  // this FFmpeg cannot decode is demuxed all the same (NVDEC may decode it).
  static Result<std::unique_ptr<Demuxer>> Open(const std::string& path, bool probe);
  ~Demuxer();
  Demuxer(const Demuxer&) = delete;
  Demuxer& operator=(const Demuxer&) = delete;

  const FfmpegApi& av() const { return *av_; }
  const AVStream& stream() const { return *format_->streams[stream_]; }
  const AVCodecParameters& codec() const { return *stream().codecpar; }

  // The next packet of the video stream into `packet` (which the caller unreferences), or false at
  // the end of the file. Errors: IOError or CorruptData with FFmpeg's reason.
  Result<bool> Next(AVPacket* packet);
  // Moves to the key frame at or before `timestamp` (the stream's time base; containers index
  // presentation or decode times, so a seek to a key frame's presentation time may land on an
  // earlier key frame, never a later one while groups are longer than the B-frame delay).
  Status Seek(int64_t timestamp);

 private:
  Demuxer(const FfmpegApi* av, AVFormatContext* format, int stream) : av_(av), format_(format), stream_(stream) {}
  const FfmpegApi* av_;
  AVFormatContext* format_;
  int stream_;
};

}  // namespace sluice

#endif  // SLUICE_VIDEO_DEMUXER_H_
