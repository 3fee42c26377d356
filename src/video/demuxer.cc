#include "video/demuxer.h"

#include <sys/stat.h>

#include <cerrno>

namespace sluice {

namespace {

Status OpenError(const FfmpegApi& av, const std::string& path, int code) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    return errno == ENOENT ? NotFound("no such file") : IOError("cannot open: ", av.ErrorText(code));
  if (!S_ISREG(st.st_mode)) return Unsupported("not a regular file");
  if (st.st_size == 0) return CorruptData("empty file");
  if (code == AVERROR_INVALIDDATA)
    return CorruptData("not a video container FFmpeg recognizes, or a damaged one (for MP4: no `moov` atom, as in a "
                       "truncated or unfinished file): ", av.ErrorText(code));
  return IOError("cannot open: ", av.ErrorText(code));
}

}  // namespace

Result<std::unique_ptr<Demuxer>> Demuxer::Open(const std::string& path, bool probe) {
  SLUICE_ASSIGN_OR_RETURN(const FfmpegApi* av, FfmpegApi::Get());
  AVFormatContext* format = nullptr;
  int rc = av->avformat_open_input(&format, path.c_str(), nullptr, nullptr);
  if (rc < 0) return OpenError(*av, path, rc);
  std::unique_ptr<Demuxer> demuxer(new Demuxer(av, format, -1));
  // Containers with a header (MP4, MKV) give the codec and the picture size without it.
  rc = av->av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  if (probe || rc < 0 || format->streams[rc]->codecpar->width <= 0) {
    rc = av->avformat_find_stream_info(format, nullptr);
    if (rc < 0) return CorruptData("cannot read the streams: ", av->ErrorText(rc));
    rc = av->av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  }
  if (rc == AVERROR_STREAM_NOT_FOUND) return Unsupported("no video stream (an audio-only file?)");
  if (rc < 0) return CorruptData("cannot find the video stream: ", av->ErrorText(rc));
  demuxer->stream_ = rc;
  // Only the video stream's packets are read.
  for (unsigned i = 0; i < format->nb_streams; ++i)
    if (static_cast<int>(i) != rc) format->streams[i]->discard = AVDISCARD_ALL;
  // No decoder is needed here: NVDEC may decode what this FFmpeg cannot (CpuPictures checks).
  const AVCodecParameters& par = demuxer->codec();
  if (par.width <= 0 || par.height <= 0) return CorruptData("the video stream has no picture size");
  return demuxer;
}

Demuxer::~Demuxer() { av_->avformat_close_input(&format_); }

Result<bool> Demuxer::Next(AVPacket* packet) {
  while (true) {
    const int rc = av_->av_read_frame(format_, packet);
    if (rc == AVERROR_EOF) return false;
    if (rc < 0) {
      if (rc == AVERROR_INVALIDDATA) return CorruptData("damaged data: ", av_->ErrorText(rc));
      return IOError("reading failed: ", av_->ErrorText(rc));
    }
    if (packet->stream_index == stream_) return true;
    av_->av_packet_unref(packet);
  }
}

Status Demuxer::Seek(int64_t timestamp) {
  const int rc = av_->av_seek_frame(format_, stream_, timestamp, AVSEEK_FLAG_BACKWARD);
  if (rc < 0) return CorruptData("cannot seek to timestamp ", timestamp, ": ", av_->ErrorText(rc));
  return Status::OK();
}

}  // namespace sluice
