#include "video/video_decoder.h"

#include <algorithm>

#include "video/cpu_pictures.h"

namespace sluice {

Result<std::unique_ptr<VideoDecoder>> VideoDecoder::Open(const std::string& path, const VideoIndex& index,
                                                         int threads) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Demuxer> demuxer, Demuxer::Open(path, /*probe=*/false));
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<CpuPictures> pictures, CpuPictures::Create(*demuxer, threads));
  return std::make_unique<VideoDecoder>(std::move(demuxer), index, std::move(pictures));
}

VideoDecoder::VideoDecoder(std::unique_ptr<Demuxer> demuxer, const VideoIndex& index,
                           std::unique_ptr<PictureSource> pictures)
    : demuxer_(std::move(demuxer)), index_(index), pictures_(std::move(pictures)),
      packet_(demuxer_->av().av_packet_alloc()) {}

VideoDecoder::~VideoDecoder() {
  pictures_.reset();  // before the demuxer, whose stream it may read
  demuxer_->av().av_packet_free(&packet_);
}

Status VideoDecoder::Decode(std::span<const int64_t> frames, const FrameFn& out) {
  if (packet_ == nullptr) return ResourceExhausted("out of memory for a packet");
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
    const size_t before = std::min(index_.KeyBefore(frames[next]), key);
    if (before == 0) break;
    key = before - 1;
  }
  return CorruptData("frame ", frames[next], " (of ", index_.num_frames(),
                     ") did not come out of the decoder: the file is truncated or damaged");
}

Status VideoDecoder::SeekTo(size_t key) {
  SLUICE_RETURN_IF_ERROR(demuxer_->Seek(index_.pts[static_cast<size_t>(index_.keyframes[key])]));
  return pictures_->Restart();
}

Result<VideoDecoder::Outcome> VideoDecoder::DecodeFrom(size_t key, bool skip_ahead, std::span<const int64_t> frames,
                                                       size_t* next, const FrameFn& out) {
  const FfmpegApi& av = demuxer_->av();
  size_t read_key = key;  // the group of the last packet read
  size_t target = key;    // the group of the last seek
  SLUICE_RETURN_IF_ERROR(SeekTo(key));
  while (*next < frames.size()) {
    // Seek to the group that holds the next wanted frame when the packets read have not reached
    // it. Each such seek goes further than the last: one that lands early does not repeat.
    const size_t want_key = index_.KeyBefore(frames[*next]);
    if (skip_ahead && want_key > read_key && want_key > target) {
      read_key = target = want_key;
      SLUICE_RETURN_IF_ERROR(SeekTo(target));
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

Result<bool> VideoDecoder::Feed(AVPacket* packet, std::span<const int64_t> frames, size_t* next,
                                const FrameFn& out) {
  bool passed = false;
  auto take = [&](int64_t pts, const YuvView& picture) -> Status {
    ++pictures_decoded_;
    const int64_t f = index_.FrameAt(pts);
    if (f < 0 || passed || *next == frames.size()) return Status::OK();
    if (frames[*next] < f) {
      passed = true;
      return Status::OK();
    }
    for (; *next < frames.size() && frames[*next] == f; ++*next) SLUICE_RETURN_IF_ERROR(out(*next, picture));
    return Status::OK();
  };
  SLUICE_RETURN_IF_ERROR(pictures_->Send(packet, take));
  return passed;
}

}  // namespace sluice
