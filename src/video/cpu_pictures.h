// CpuPictures: a video stream decoded on the CPU with FFmpeg's libavcodec. Pictures are 8-bit
// 4:2:0 (yuv420p, yuvj420p, nv12); others are refused by name.
//
// Thread-safety: one thread at a time; several may run at once.
#ifndef SLUICE_VIDEO_CPU_PICTURES_H_
#define SLUICE_VIDEO_CPU_PICTURES_H_

#include <memory>

#include "video/demuxer.h"
#include "video/picture_source.h"

namespace sluice {

class CpuPictures : public PictureSource {
 public:
  // For `demuxer`'s stream (which must outlive it). `threads`: libavcodec's own threads.
  static Result<std::unique_ptr<CpuPictures>> Create(const Demuxer& demuxer, int threads);
  ~CpuPictures() override;

  Status Restart() override;
  Status Send(AVPacket* packet, const PictureFn& out) override;

 private:
  CpuPictures(const FfmpegApi& av, AVCodecContext* codec, AVFrame* frame) : av_(av), codec_(codec), frame_(frame) {}
  const FfmpegApi& av_;
  AVCodecContext* codec_;
  AVFrame* frame_;
};

// The view of an 8-bit 4:2:0 picture, or Unsupported naming its pixel format.
Result<YuvView> PictureView(const FfmpegApi& av, const AVFrame& frame);

}  // namespace sluice

#endif  // SLUICE_VIDEO_CPU_PICTURES_H_
