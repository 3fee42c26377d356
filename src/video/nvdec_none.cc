// VideoDecoder::OpenNvdec in a build without the CUDA path.
#include "video/video_decoder.h"

namespace sluice {

Result<std::unique_ptr<VideoDecoder>> VideoDecoder::OpenNvdec(const std::string&, const VideoIndex&, void*,
                                                              NvdecDecoderSlot*) {
  return FailedPrecondition("NVDEC: this build of sluice has no CUDA path");
}

}  // namespace sluice
