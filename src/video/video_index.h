// VideoIndex: what a video holds, read once from its packets without decoding a picture: the
// frames in presentation order (frame i is the one a decoder outputs i-th), their timestamps, and
// which of them are key frames (where decoding can start), so that frame i can be reached by
// seeking to the key frame before it and decoding forward.
//
//   SLUICE_ASSIGN_OR_RETURN(VideoIndex index, IndexVideo("clip.mp4"));
//   index.num_frames();                  // 300
//   index.keyframes[index.KeyBefore(37)];  // 24: decoding frame 37 starts at frame 24
//
// Packets the container marks as discarded (an MP4 edit list cutting the start) and pictures
// before the first key frame (which no decoder outputs) are not frames.
// Thread-safety: a plain value.
#ifndef SLUICE_VIDEO_VIDEO_INDEX_H_
#define SLUICE_VIDEO_VIDEO_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sluice/status.h"

namespace sluice {

struct VideoIndex {
  std::string codec;  // FFmpeg's name: "h264", "hevc", "av1", ...
  int width = 0, height = 0;
  int time_base_num = 1, time_base_den = 1;  // a timestamp t is t * num / den seconds
  std::vector<int64_t> pts;        // frame i's presentation timestamp, ascending
  std::vector<int64_t> keyframes;  // the frames that are key frames, ascending; keyframes[0] == 0

  int64_t num_frames() const { return static_cast<int64_t>(pts.size()); }
  // The last key frame at or before frame `frame` (a position in `keyframes`).
  // REQUIRES: 0 <= frame < num_frames().
  size_t KeyBefore(int64_t frame) const;
  // The frame whose timestamp is `timestamp`, or -1 when no frame has it.
  int64_t FrameAt(int64_t timestamp) const;
  // Frames per second over the whole video (0 with fewer than two frames).
  double AverageRate() const;
};

// Reads the packets of `path`'s video stream (every packet, no picture is decoded). Errors: those
// of Demuxer::Open, CorruptData for a stream whose packets carry no timestamps or no key frame,
// each naming the reason (the caller adds the file's name).
Result<VideoIndex> IndexVideo(const std::string& path);

}  // namespace sluice

#endif  // SLUICE_VIDEO_VIDEO_INDEX_H_
