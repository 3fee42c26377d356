#include "video/cpu_pictures.h"

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

Result<std::unique_ptr<CpuPictures>> CpuPictures::Create(const Demuxer& demuxer, int threads) {
  const FfmpegApi& av = demuxer.av();
  const AVCodec* codec = av.avcodec_find_decoder(demuxer.codec().codec_id);
  if (codec == nullptr)
    return Unsupported("codec ", av.avcodec_get_name(demuxer.codec().codec_id), ": this FFmpeg has no decoder for it");
  std::unique_ptr<CpuPictures> p(new CpuPictures(av, av.avcodec_alloc_context3(codec), av.av_frame_alloc()));
  if (p->codec_ == nullptr || p->frame_ == nullptr) return ResourceExhausted("out of memory for a video decoder");
  int rc = av.avcodec_parameters_to_context(p->codec_, &demuxer.codec());
  if (rc < 0) return CorruptData("the stream's codec parameters: ", av.ErrorText(rc));
  p->codec_->thread_count = threads;
  p->codec_->pkt_timebase = demuxer.stream().time_base;
  rc = av.avcodec_open2(p->codec_, codec, nullptr);
  if (rc < 0) return Unsupported("cannot open the ", av.avcodec_get_name(codec->id), " decoder: ", av.ErrorText(rc));
  return p;
}

CpuPictures::~CpuPictures() {
  av_.av_frame_free(&frame_);
  av_.avcodec_free_context(&codec_);
}

Status CpuPictures::Restart() {
  av_.avcodec_flush_buffers(codec_);
  return Status::OK();
}

Status CpuPictures::Send(AVPacket* packet, const PictureFn& out) {
  int rc = av_.avcodec_send_packet(codec_, packet);
  if (rc < 0 && rc != AVERROR(EAGAIN) && rc != AVERROR_EOF)
    return CorruptData("damaged data in the video stream: ", av_.ErrorText(rc));
  while (true) {
    rc = av_.avcodec_receive_frame(codec_, frame_);
    if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF) return Status::OK();
    if (rc < 0) return CorruptData("damaged data in the video stream: ", av_.ErrorText(rc));
    const int64_t pts = frame_->pts != AV_NOPTS_VALUE ? frame_->pts : frame_->best_effort_timestamp;
    Result<YuvView> view = PictureView(av_, *frame_);
    Status s = view.ok() ? out(pts, *view) : view.status();
    av_.av_frame_unref(frame_);
    SLUICE_RETURN_IF_ERROR(s);
  }
}

}  // namespace sluice
