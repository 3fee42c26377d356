#include "video/clip_source.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include "core/fnv.h"
#include "video/video_decoder.h"
#include "video/video_index_cache.h"

namespace sluice {

namespace {

// Each video's index (from `cache` when it has it), `threads` videos at a time; a failure stays
// in its slot.
std::vector<Result<VideoIndex>> IndexAll(const std::vector<Sample>& videos, int threads, const std::string& cache) {
  std::vector<Result<VideoIndex>> out(videos.size(), Result<VideoIndex>(Cancelled("not indexed")));
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < videos.size(); i = next++) out[i] = IndexVideoCached(videos[i].path, cache);
  };
  std::vector<std::thread> pool;
  const size_t n = std::min(videos.size(), static_cast<size_t>(std::max(1, threads)));
  for (size_t t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  return out;
}

}  // namespace

Result<std::shared_ptr<const ClipSource>> ClipSource::Create(std::vector<Sample> videos,
                                                             std::vector<std::string> classes, const ClipSpec& spec,
                                                             const Options& options) {
  if (videos.empty()) return InvalidArgument("no videos");
  if (Result<ClipLayout> check = ClipLayout::Create(spec, {}); !check.ok()) return check.status();  // the spec
  std::vector<Result<VideoIndex>> indexed = IndexAll(videos, options.threads, options.index_cache);
  std::vector<VideoIndex> indexes(videos.size());
  std::vector<int64_t> frames(videos.size(), 0);
  std::vector<std::pair<std::string, std::string>> skipped;
  for (size_t v = 0; v < videos.size(); ++v) {
    if (!indexed[v].ok()) {
      if (!options.skip_bad) return indexed[v].status().WithPrefix(videos[v].path);
      skipped.emplace_back(videos[v].path, indexed[v].status().message());
      continue;
    }
    indexes[v] = std::move(indexed[v]).value();
    frames[v] = indexes[v].num_frames();
    if (frames[v] < spec.span()) {
      const std::string why = std::to_string(frames[v]) + " frames, shorter than one clip (" +
                              std::to_string(spec.span()) + " frames: sequence_length " + std::to_string(spec.length) +
                              ", stride " + std::to_string(spec.stride) + ")";
      if (!options.skip_bad) return InvalidArgument(videos[v].path, ": ", why);
      skipped.emplace_back(videos[v].path, why);
      frames[v] = 0;
    }
  }
  SLUICE_ASSIGN_OR_RETURN(ClipLayout layout, ClipLayout::Create(spec, frames));
  if (layout.num_clips() == 0) return InvalidArgument("no clips: every video was left out (", skipped.size(), " bad or short)");
  return std::shared_ptr<const ClipSource>(new ClipSource(std::move(videos), std::move(classes), std::move(indexes),
                                                          spec, std::move(layout), std::move(skipped)));
}

Result<SampleBytes> ClipSource::Read(int64_t, const ByteAllocator&, int64_t) const {
  return Unsupported("a video clip is decoded by the loader's video path, not read as bytes");
}

uint64_t ClipSource::Digest() const {
  // The clips' numbering: the spec, and each video's name tail, label and frame count.
  Fnv1a h;
  const int64_t spec[] = {spec_.length, spec_.stride, spec_.step, static_cast<int64_t>(spec_.policy), spec_.per_video};
  h.Mix(spec, sizeof(spec));
  for (size_t v = 0; v < videos_.size(); ++v) {
    const std::string& path = videos_[v].path;
    size_t cut = path.find_last_of('/');
    if (cut != std::string::npos && cut > 0) cut = path.find_last_of('/', cut - 1);
    h.Mix(cut == std::string::npos ? std::string_view(path) : std::string_view(path).substr(cut + 1));
    h.Mix("", 1);
    const int64_t fields[] = {videos_[v].label, indexes_[v].num_frames()};
    h.Mix(fields, sizeof(fields));
  }
  return h.value();
}

Clip ClipSource::ClipAt(int64_t index, uint64_t seed, int64_t epoch) const {
  return layout_.At(index, seed, static_cast<uint64_t>(epoch));
}

Status ClipSource::DecodeFrames(size_t video, std::span<const int64_t> frames,
                                const std::function<Status(size_t e, const YuvView&)>& out, void* nvdec_stream,
                                NvdecDecoderSlot* nvdec_slot, int64_t* pictures) const {
  const VideoIndex& vindex = indexes_[video];
  const std::string& path = videos_[video].path;
  auto decode = [&](bool nvdec) -> Status {
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<VideoDecoder> decoder, nvdec ? VideoDecoder::OpenNvdec(path, vindex, nvdec_stream, nvdec_slot)
                                                                          : VideoDecoder::Open(path, vindex));
    const Status s = decoder->Decode(frames, out);
    *pictures += decoder->pictures();
    return s;
  };
  Status s = decode(nvdec_stream != nullptr);
  // What NVDEC refuses (a codec it has no engine for, a format or size outside its limits) the
  // CPU decodes: its pictures then come in host memory.
  if (nvdec_stream != nullptr && s.code() == StatusCode::kUnsupported) s = decode(false);
  if (!s.ok())
    return Status(s.code(), "clip of frames " + std::to_string(frames.front()) + "-" + std::to_string(frames.back()) + ": " +
                                s.message());
  return Status::OK();
}

ClipSource::Decoded ClipSource::DecodeClips(std::span<const int64_t> indices, uint64_t seed, int64_t epoch,
                                            const ClipFrameFn& out, void* nvdec_stream,
                                            NvdecDecoderSlot* nvdec_slot) const {
  Decoded d;
  if (indices.empty()) return d;
  // Every (clip, frame) wanted, in the video's order.
  struct Want {
    int64_t frame;
    size_t j;
    int k;
  };
  std::vector<Want> wants;
  size_t video = 0;
  for (size_t j = 0; j < indices.size(); ++j) {
    const Clip clip = ClipAt(indices[j], seed, epoch);
    video = static_cast<size_t>(clip.video);
    for (int k = 0; k < clip.length; ++k) wants.push_back({clip.Frame(k), j, k});
  }
  std::stable_sort(wants.begin(), wants.end(), [](const Want& a, const Want& b) { return a.frame < b.frame; });
  std::vector<int64_t> frames(wants.size());
  for (size_t e = 0; e < wants.size(); ++e) frames[e] = wants[e].frame;
  const Status joint = DecodeFrames(
      video, frames, [&](size_t e, const YuvView& pic) { return out(wants[e].j, wants[e].k, pic); }, nvdec_stream,
      nvdec_slot, &d.pictures);
  if (joint.ok() || indices.size() == 1 || joint.code() == StatusCode::kCancelled) {
    d.status.assign(indices.size(), joint);
    return d;
  }
  d.status.resize(indices.size());
  for (size_t j = 0; j < indices.size(); ++j) {
    const Clip clip = ClipAt(indices[j], seed, epoch);
    std::vector<int64_t> own(static_cast<size_t>(clip.length));
    for (int k = 0; k < clip.length; ++k) own[static_cast<size_t>(k)] = clip.Frame(k);
    d.status[j] = DecodeFrames(
        video, own, [&](size_t k, const YuvView& pic) { return out(j, static_cast<int>(k), pic); }, nvdec_stream,
        nvdec_slot, &d.pictures);
  }
  return d;
}

std::vector<std::vector<int>> ClipSource::GroupByVideo(std::span<const int64_t> indices, uint64_t seed,
                                                        int64_t epoch, int max_group) const {
  std::vector<std::vector<int>> by_video;
  std::vector<size_t> video_of_group;
  for (size_t i = 0; i < indices.size(); ++i) {
    const size_t v = VideoOf(indices[i]);
    const auto at = std::find(video_of_group.begin(), video_of_group.end(), v);
    if (at == video_of_group.end()) {
      video_of_group.push_back(v);
      by_video.push_back({static_cast<int>(i)});
    } else {
      by_video[static_cast<size_t>(at - video_of_group.begin())].push_back(static_cast<int>(i));
    }
  }
  const size_t cap = static_cast<size_t>(std::max(1, max_group));
  std::vector<std::vector<int>> groups;
  for (std::vector<int>& clips : by_video) {
    std::stable_sort(clips.begin(), clips.end(), [&](int a, int b) {
      return ClipAt(indices[static_cast<size_t>(a)], seed, epoch).first <
             ClipAt(indices[static_cast<size_t>(b)], seed, epoch).first;
    });
    for (size_t at = 0; at < clips.size(); at += cap)
      groups.emplace_back(clips.begin() + static_cast<std::ptrdiff_t>(at),
                          clips.begin() + static_cast<std::ptrdiff_t>(std::min(clips.size(), at + cap)));
  }
  return groups;
}

}  // namespace sluice
