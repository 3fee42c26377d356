// FFmpeg's libavformat (demuxing), libavcodec (decoding) and libavutil loaded at run time, by the
// major versions of the headers sluice was built with (libavformat.so.59 for FFmpeg 5.1), so that
// one build runs on machines without FFmpeg (video is then refused with what to install) and the
// structures sluice reads match the library's. Building needs only the headers.
//
//   SLUICE_ASSIGN_OR_RETURN(const FfmpegApi* av, FfmpegApi::Get());
//   AVPacket* packet = av->av_packet_alloc();
//
// Thread-safety: FfmpegApi::Get() may be called from any thread; the table is immutable once
// loaded. FFmpeg's contexts are used by one thread at a time.
#ifndef SLUICE_VIDEO_FFMPEG_API_H_
#define SLUICE_VIDEO_FFMPEG_API_H_

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavcodec/bsf.h>
#include <libavformat/avformat.h>
#include <libavutil/error.h>
#include <libavutil/log.h>
#include <libavutil/pixdesc.h>
}

#include <string>

#include "sluice/status.h"

namespace sluice {

// The functions sluice calls, each declared and loaded from one list per library.
#define SLUICE_AVUTIL_FUNCTIONS(X) \
  X(av_frame_alloc)                \
  X(av_frame_free)                 \
  X(av_frame_unref)                \
  X(av_strerror)                   \
  X(av_log_set_level)              \
  X(av_get_pix_fmt_name)

#define SLUICE_AVCODEC_FUNCTIONS(X) \
  X(avcodec_find_decoder)           \
  X(avcodec_get_name)               \
  X(avcodec_alloc_context3)         \
  X(avcodec_parameters_to_context)  \
  X(avcodec_open2)                  \
  X(avcodec_send_packet)            \
  X(avcodec_receive_frame)          \
  X(avcodec_flush_buffers)          \
  X(avcodec_free_context)           \
  X(av_packet_alloc)                \
  X(av_packet_free)                 \
  X(av_packet_unref)                \
  X(avcodec_parameters_copy)        \
  X(av_bsf_get_by_name)             \
  X(av_bsf_alloc)                   \
  X(av_bsf_init)                    \
  X(av_bsf_send_packet)             \
  X(av_bsf_receive_packet)          \
  X(av_bsf_free)

#define SLUICE_AVFORMAT_FUNCTIONS(X) \
  X(avformat_open_input)             \
  X(avformat_find_stream_info)       \
  X(avformat_close_input)            \
  X(av_find_best_stream)             \
  X(av_read_frame)                   \
  X(av_seek_frame)

struct FfmpegApi {
#define SLUICE_AV_FN(name) decltype(&::name) name = nullptr;
  SLUICE_AVUTIL_FUNCTIONS(SLUICE_AV_FN)
  SLUICE_AVCODEC_FUNCTIONS(SLUICE_AV_FN)
  SLUICE_AVFORMAT_FUNCTIONS(SLUICE_AV_FN)
#undef SLUICE_AV_FN

  // The loaded libraries, or FailedPrecondition naming the files tried and what to install.
  static Result<const FfmpegApi*> Get();
  // FFmpeg's message for an error code (AVERROR_INVALIDDATA: "Invalid data found when processing input").
  std::string ErrorText(int code) const;
  std::string libraries;  // the files loaded, for messages
};

}  // namespace sluice

#endif  // SLUICE_VIDEO_FFMPEG_API_H_
