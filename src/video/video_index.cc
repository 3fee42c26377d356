#include "video/video_index.h"

#include <algorithm>
#include <memory>

#include "video/demuxer.h"

namespace sluice {

size_t VideoIndex::KeyBefore(int64_t frame) const {
  const auto it = std::upper_bound(keyframes.begin(), keyframes.end(), frame);
  return it == keyframes.begin() ? 0 : static_cast<size_t>(it - keyframes.begin() - 1);
}

int64_t VideoIndex::FrameAt(int64_t timestamp) const {
  const auto it = std::lower_bound(pts.begin(), pts.end(), timestamp);
  return it != pts.end() && *it == timestamp ? it - pts.begin() : -1;
}

double VideoIndex::AverageRate() const {
  if (pts.size() < 2 || pts.back() == pts.front()) return 0;
  const double seconds = static_cast<double>(pts.back() - pts.front()) * time_base_num / time_base_den;
  return static_cast<double>(pts.size() - 1) / seconds;
}

namespace {

struct Entry {
  int64_t pts;
  bool key;
};

// The packets' entries in presentation order, from the first key frame on.
Result<std::vector<Entry>> ReadEntries(Demuxer* demuxer) {
  const FfmpegApi& av = demuxer->av();
  std::unique_ptr<AVPacket, void (*)(AVPacket*)> packet(av.av_packet_alloc(), [](AVPacket* p) {
    const FfmpegApi* api = *FfmpegApi::Get();
    api->av_packet_free(&p);
  });
  if (packet == nullptr) return ResourceExhausted("out of memory for a packet");
  std::vector<Entry> entries;
  int64_t packets = 0;
  while (true) {
    SLUICE_ASSIGN_OR_RETURN(const bool more, demuxer->Next(packet.get()));
    if (!more) break;
    const AVPacket& p = *packet;
    ++packets;
    const int64_t pts = p.pts != AV_NOPTS_VALUE ? p.pts : p.dts;
    const bool discard = (p.flags & AV_PKT_FLAG_DISCARD) != 0;
    const bool key = (p.flags & AV_PKT_FLAG_KEY) != 0;
    av.av_packet_unref(packet.get());
    if (discard) continue;
    if (pts == AV_NOPTS_VALUE) return CorruptData("packet ", entries.size(), " of the video stream has no timestamp");
    entries.push_back(Entry{pts, key});
  }
  // MP4 lists every packet in its header: fewer in the file means it was cut short.
  const int64_t listed = demuxer->stream().nb_frames;
  if (listed > 0 && packets < listed)
    return CorruptData("truncated: the container lists ", listed, " frames, the file holds ", packets);
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.pts < b.pts; });
  const auto first_key = std::find_if(entries.begin(), entries.end(), [](const Entry& e) { return e.key; });
  if (first_key == entries.end()) return CorruptData("the video stream has no key frame");
  entries.erase(entries.begin(), first_key);
  return entries;
}

}  // namespace

Result<VideoIndex> IndexVideo(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Demuxer> demuxer, Demuxer::Open(path, /*probe=*/true));
  VideoIndex index;
  const AVCodecParameters& par = demuxer->codec();
  index.codec = demuxer->av().avcodec_get_name(par.codec_id);
  index.width = par.width;
  index.height = par.height;
  index.time_base_num = demuxer->stream().time_base.num;
  index.time_base_den = demuxer->stream().time_base.den;
  SLUICE_ASSIGN_OR_RETURN(std::vector<Entry> entries, ReadEntries(demuxer.get()));
  index.pts.reserve(entries.size());
  for (const Entry& e : entries) {
    if (e.key) index.keyframes.push_back(index.num_frames());
    index.pts.push_back(e.pts);
  }
  return index;
}

}  // namespace sluice
