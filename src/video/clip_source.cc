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

Status ClipSource::DecodeClip(int64_t index, uint64_t seed, int64_t epoch, const FrameFn& out,
                              void* nvdec_stream, NvdecDecoderSlot* nvdec_slot) const {
  const Clip clip = ClipAt(index, seed, epoch);
  const VideoIndex& vindex = indexes_[static_cast<size_t>(clip.video)];
  std::vector<int64_t> frames(static_cast<size_t>(clip.length));
  for (int k = 0; k < clip.length; ++k) frames[static_cast<size_t>(k)] = clip.Frame(k);
  const std::string& path = videos_[static_cast<size_t>(clip.video)].path;
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<VideoDecoder> decoder, nvdec_stream != nullptr
                                                                     ? VideoDecoder::OpenNvdec(path, vindex, nvdec_stream, nvdec_slot)
                                                                     : VideoDecoder::Open(path, vindex));
  const Status s = decoder->Decode(frames, [&](size_t k, const YuvView& frame) { return out(static_cast<int>(k), frame); });
  if (!s.ok())
    return Status(s.code(), "clip of frames " + std::to_string(frames.front()) + "-" + std::to_string(frames.back()) +
                                ": " + s.message());
  return Status::OK();
}

}  // namespace sluice
