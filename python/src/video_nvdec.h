// Frames decoded on NVDEC for read_video_frames(device="cuda"): the tests compare them with the
// CPU's decode of the same frames.
#ifndef SLUICE_PYTHON_VIDEO_NVDEC_H_
#define SLUICE_PYTHON_VIDEO_NVDEC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "video/video_index.h"

namespace sluice::python {

// RGB (n * h * w * 3) or, for "yuv420p", the Y, U and V planes of each frame, in host memory.
// Called without the GIL. Errors: those of VideoDecoder::OpenNvdec and Decode, CUDA's.
Status DecodeOnNvdec(const std::string& path, const VideoIndex& index, const std::vector<int64_t>& frames,
                     const std::string& format, int device, std::vector<uint8_t>* rgb, std::vector<uint8_t>* y,
                     std::vector<uint8_t>* u, std::vector<uint8_t>* v);

}  // namespace sluice::python

#endif  // SLUICE_PYTHON_VIDEO_NVDEC_H_
