// PictureSource: a decoder behind VideoDecoder: compressed packets in (decode order), pictures
// out (presentation order). CpuPictures decodes with libavcodec, NvdecPictures on the GPU's
// video engines; VideoDecoder does the seeking and picks out the wanted frames for both.
//
// Thread-safety: one thread at a time.
#ifndef SLUICE_VIDEO_PICTURE_SOURCE_H_
#define SLUICE_VIDEO_PICTURE_SOURCE_H_

#include <cstdint>
#include <functional>

#include "core/yuv_view.h"
#include "video/ffmpeg_api.h"

namespace sluice {

class PictureSource {
 public:
  // A picture and its presentation timestamp; the view is valid during the call (host memory
  // for CpuPictures, device memory for NvdecPictures).
  using PictureFn = std::function<Status(int64_t pts, const YuvView& picture)>;

  virtual ~PictureSource() = default;
  // Drops what is pending: the next packet follows a seek (and is a key frame).
  virtual Status Restart() = 0;
  // Decodes `packet` (null: the end of the stream: everything pending comes out), calling `out`
  // for each picture ready. It may take the packet's data; the caller unreferences the packet. Errors: CorruptData for damaged data, Unsupported for a picture
  // format not handled, and what `out` returns.
  virtual Status Send(AVPacket* packet, const PictureFn& out) = 0;
};

}  // namespace sluice

#endif  // SLUICE_VIDEO_PICTURE_SOURCE_H_
