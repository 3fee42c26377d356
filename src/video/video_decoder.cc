#include "video/video_decoder.h"

#include <algorithm>
#include <cerrno>

namespace sluice {

Result<YuvView> PictureView(const FfmpegApi& av, const AVFrame& frame) {
  YuvView view;
  view.y = frame.data[0];
  view.y_stride = frame.linesize[0];
  view.height = frame.height;
  view.width = frame.width;
  switch (frame.format) {
    case AV_PIX_FMT_YUV420P:
    case AV_PIX_FMT_YUVJ420P:
      if (frame.linesize[1] != frame.linesize[2]) return Internal("the chroma planes have different strides");
      view.u = frame.data[1];
      view.v = frame.data[2];
      view.uv_stride = frame.linesize[1];
      break;
    case AV_PIX_FMT_NV12:
      view.u = frame.data[1];
      view.v = frame.data[1] + 1;
      view.uv_stride = frame.linesize[1];
      view.uv_step = 2;
      break;
    default: {
      const char* name = av.av_get_pix_fmt_name(static_cast<AVPixelFormat>(frame.format));
      return Unsupported("pixel format ", name != nullptr ? name : "unknown",
                         ": sluice reads 8-bit 4:2:0 video (yuv420p, nv12)");
    }
  }
  if (frame.colorspace == AVCOL_SPC_BT709) {
    view.matrix = YuvMatrix::kBt709;
  } else if (frame.colorspace == AVCOL_SPC_BT2020_NCL || frame.colorspace == AVCOL_SPC_BT2020_CL) {
    view.matrix = YuvMatrix::kBt2020;
  }  // else BT.601, as FFmpeg's swscale assumes for untagged video
  view.full_range = frame.color_range == AVCOL_RANGE_JPEG || frame.format == AV_PIX_FMT_YUVJ420P;
  return view;
}

Result<std::unique_ptr<VideoDecoder>> VideoDecoder::Open(const std::string& path, const VideoIndex& index,
                                                         int threads) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Demuxer> demuxer, Demuxer::Open(path, /*probe=*/false));
  const FfmpegApi& av = demuxer->av();
  const AVCodec* codec = av.avcodec_find_decoder(demuxer->codec().codec_id);
  AVCodecContext* context = av.avcodec_alloc_context3(codec);
  AVPacket* packet = av.av_packet_alloc();
  AVFrame* frame = av.av_frame_alloc();
  std::unique_ptr<VideoDecoder> decoder(new VideoDecoder(std::move(demuxer), index, context, packet, frame));
  if (context == nullptr || packet == nullptr || frame == nullptr)
    return ResourceExhausted("out of memory for a video decoder");
  int rc = av.avcodec_parameters_to_context(context, &decoder->demuxer_->codec());
  if (rc < 0) return CorruptData("the stream's codec parameters: ", av.ErrorText(rc));
  context->thread_count = threads;
  context->pkt_timebase = decoder->demuxer_->stream().time_base;
  rc = av.avcodec_open2(context, codec, nullptr);
  if (rc < 0) return Unsupported("cannot open the ", av.avcodec_get_name(codec->id), " decoder: ", av.ErrorText(rc));
  return decoder;
}

VideoDecoder::~VideoDecoder() {
  const FfmpegApi& av = demuxer_->av();
  av.av_frame_free(&frame_);
  av.av_packet_free(&packet_);
  av.avcodec_free_context(&codec_);
}

Status VideoDecoder::Decode(std::span<const int64_t> frames, const FrameFn& out) {
  for (size_t k = 0; k < frames.size(); ++k) {
    if (frames[k] < 0 || frames[k] >= index_.num_frames())
      return OutOfRange("frame ", frames[k], " of a video of ", index_.num_frames(), " frames");
    if (k > 0 && frames[k] < frames[k - 1]) return InvalidArgument("the frames to decode are not in ascending order");
  }
  size_t next = 0;
  if (frames.empty()) return Status::OK();
  size_t key = index_.KeyBefore(frames[0]);
  // A frame passed over (a picture that needs an earlier group, as in an open group of pictures)
  // is tried again from earlier key frames, a few at most.
  for (int attempt = 0; attempt < 3; ++attempt) {
    SLUICE_ASSIGN_OR_RETURN(const Outcome outcome, DecodeFrom(key, attempt == 0, frames, &next, out));
    if (outcome == Outcome::kDone) return Status::OK();
    if (outcome == Outcome::kEnded) break;
    const size_t before = index_.KeyBefore(frames[next]);
    if (before == 0 || std::min(before, key) == 0) break;
    key = std::min(before, key) - 1;
  }
  return CorruptData("frame ", frames[next], " (of ", index_.num_frames(),
                     ") did not come out of the decoder: the file is truncated or damaged");
}

Result<VideoDecoder::Outcome> VideoDecoder::DecodeFrom(size_t key, bool skip_ahead, std::span<const int64_t> frames,
                                                       size_t* next, const FrameFn& out) {
  const FfmpegApi& av = demuxer_->av();
  size_t read_key = key;  // the group of the last packet read
  size_t target = key;    // the group of the last seek
  bool seeked = false;
  while (*next < frames.size()) {
    // Seek to the group that holds the next wanted frame when the packets read have not reached
    // it. Each such seek goes further than the last: one that lands early does not repeat.
    const size_t want_key = index_.KeyBefore(frames[*next]);
    if (!seeked || (skip_ahead && want_key > read_key && want_key > target)) {
      if (seeked) target = want_key;
      read_key = target;
      seeked = true;
      SLUICE_RETURN_IF_ERROR(demuxer_->Seek(index_.pts[static_cast<size_t>(index_.keyframes[target])]));
      av.avcodec_flush_buffers(codec_);
    }
    SLUICE_ASSIGN_OR_RETURN(const bool more, demuxer_->Next(packet_));
    if (!more) {
      SLUICE_ASSIGN_OR_RETURN(const bool passed, Feed(nullptr, frames, next, out));
      if (passed) return Outcome::kPassed;
      return *next == frames.size() ? Outcome::kDone : Outcome::kEnded;
    }
    if ((packet_->flags & AV_PKT_FLAG_KEY) != 0) {
      const int64_t f = index_.FrameAt(packet_->pts != AV_NOPTS_VALUE ? packet_->pts : packet_->dts);
      if (f >= 0) read_key = index_.KeyBefore(f);
    }
    Result<bool> passed = Feed(packet_, frames, next, out);
    av.av_packet_unref(packet_);
    if (!passed.ok()) return passed.status();
    if (*passed) return Outcome::kPassed;
  }
  return Outcome::kDone;
}

Result<bool> VideoDecoder::Feed(const AVPacket* packet, std::span<const int64_t> frames, size_t* next,
                                const FrameFn& out) {
  const FfmpegApi& av = demuxer_->av();
  int rc = av.avcodec_send_packet(codec_, packet);
  if (rc < 0 && rc != AVERROR(EAGAIN) && rc != AVERROR_EOF)
    return CorruptData("damaged data in the video stream: ", av.ErrorText(rc));
  while (*next < frames.size()) {
    rc = av.avcodec_receive_frame(codec_, frame_);
    if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF) break;
    if (rc < 0) return CorruptData("damaged data in the video stream: ", av.ErrorText(rc));
    const int64_t pts = frame_->pts != AV_NOPTS_VALUE ? frame_->pts : frame_->best_effort_timestamp;
    const int64_t f = index_.FrameAt(pts);
    Status status;
    bool passed = false;
    if (f >= 0) {
      passed = frames[*next] < f;
      if (!passed) status = Deliver(f, frames, next, out);
    }
    av.av_frame_unref(frame_);
    SLUICE_RETURN_IF_ERROR(status);
    if (passed) return true;
  }
  return false;
}

Status VideoDecoder::Deliver(int64_t f, std::span<const int64_t> frames, size_t* next, const FrameFn& out) {
  if (frames[*next] != f) return Status::OK();
  SLUICE_ASSIGN_OR_RETURN(const YuvView view, PictureView(demuxer_->av(), *frame_));
  for (; *next < frames.size() && frames[*next] == f; ++*next) SLUICE_RETURN_IF_ERROR(out(*next, view));
  return Status::OK();
}

}  // namespace sluice
