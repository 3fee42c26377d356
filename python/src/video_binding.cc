// Video entry points for tests and tools: a video's index, and chosen frames decoded on the CPU
// (as RGB, or as the decoder's own 4:2:0 planes, which tests compare with PyAV's exactly).
#include <nanobind/ndarray.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <vector>

#include "bindings.h"
#include "kernels/yuv/yuv_cpu.h"
#include "video/clip_source.h"
#include "video/video_decoder.h"
#include "video/video_index.h"
#include "video_nvdec.h"

namespace sluice::python {

namespace {

using U8Array = nb::ndarray<nb::numpy, uint8_t>;

U8Array ToNumpy(std::vector<uint8_t>* pixels, std::initializer_list<size_t> shape) {
  auto* owned = new std::vector<uint8_t>(std::move(*pixels));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<uint8_t>*>(p); });
  return U8Array(owned->data(), shape, owner);
}

template <typename T>
T UnwrapFor(const std::string& path, Result<T> r) {
  if (!r.ok()) ThrowBatchStatus(r.status().WithPrefix(path));
  return std::move(r).value();
}

nb::dict IndexToDict(const VideoIndex& index) {
  nb::dict d;
  d["codec"] = index.codec;
  d["width"] = index.width;
  d["height"] = index.height;
  d["num_frames"] = index.num_frames();
  d["time_base"] = nb::make_tuple(index.time_base_num, index.time_base_den);
  d["pts"] = index.pts;
  d["keyframes"] = index.keyframes;
  d["average_rate"] = index.AverageRate();
  return d;
}

// Copies one plane's rows (w bytes each) into `out`.
void CopyPlane(const uint8_t* src, ptrdiff_t stride, int step, int h, int w, uint8_t* out) {
  for (int r = 0; r < h; ++r)
    for (int c = 0; c < w; ++c) out[static_cast<size_t>(r) * w + c] = src[r * stride + c * step];
}

nb::tuple MakeVideos(nb::handle pairs, std::vector<std::string> classes, int length, int stride, int step,
                     int per_video, bool skip_bad, int threads, nb::handle index_cache) {
  std::vector<Sample> videos;
  for (nb::handle item : nb::iter(pairs)) {
    const std::string what = "videos[" + std::to_string(videos.size()) + "]";
    videos.push_back(Sample{PathFromPy(item[0], what + " path"), ToInt(what + " label", item[1], INT64_MIN, INT64_MAX)});
  }
  const std::string cache = index_cache.is_none() ? std::string() : PathFromPy(index_cache, "index_cache");
  ClipSpec spec{length, stride, step, per_video > 0 ? ClipPolicy::kRandomClips : ClipPolicy::kEveryClip,
                per_video > 0 ? per_video : 1};
  Result<std::shared_ptr<const ClipSource>> source = [&] {
    nb::gil_scoped_release release;
    return ClipSource::Create(std::move(videos), std::move(classes), spec, {skip_bad, threads, cache});
  }();
  std::shared_ptr<const ClipSource> clips = Unwrap(std::move(source));
  nb::list skipped;
  for (const auto& [path, reason] : clips->skipped()) skipped.append(nb::make_tuple(PathToPy(path), MessageToPy(reason)));
  nb::list frames;
  for (size_t v = 0; v < clips->videos().size(); ++v) frames.append(clips->index_of(v).num_frames());
  return nb::make_tuple(PySource{clips}, skipped, frames);
}

// "cpu" -> -1, "cuda" -> 0, "cuda:N" -> N.
int DeviceIndex(const std::string& device) {
  if (device == "cpu") return -1;
  if (device == "cuda") return 0;
  if (device.rfind("cuda:", 0) == 0 && device.size() > 5 && device.find_first_not_of("0123456789", 5) == std::string::npos)
    return std::stoi(device.substr(5));
  Raise(PyExc_ValueError, "device must be 'cpu', 'cuda' or 'cuda:N', got '" + device + "'");
}

nb::object ReadVideoFrames(nb::handle path, const std::vector<int64_t>& frames, const std::string& format,
                           const std::string& device) {
  if (format != "rgb" && format != "yuv420p") Raise(PyExc_ValueError, "format must be 'rgb' or 'yuv420p', got '" + format + "'");
  const int gpu = DeviceIndex(device);
  const std::string p = PathFromPy(path, "path");
  Result<VideoIndex> indexed = [&] {
    nb::gil_scoped_release release;
    return IndexVideo(p);
  }();
  const VideoIndex index = UnwrapFor(p, std::move(indexed));
  const size_t n = frames.size(), h = static_cast<size_t>(index.height), w = static_cast<size_t>(index.width);
  const size_t ch = (h + 1) / 2, cw = (w + 1) / 2;
  std::vector<uint8_t> rgb, y, u, v;
  if (format == "rgb") {
    rgb.resize(n * h * w * 3);
  } else {
    y.resize(n * h * w);
    u.resize(n * ch * cw);
    v.resize(n * ch * cw);
  }
  auto out = [&](size_t k, const YuvView& pic) -> Status {
    if (static_cast<size_t>(pic.height) != h || static_cast<size_t>(pic.width) != w)
      return Unsupported("frame ", frames[k], " is ", pic.width, "x", pic.height, ", not ", w, "x", h,
                         " as the stream's first: a size change mid-stream");
    if (format == "rgb") {
      YuvToRgbCpu(pic, MutableImageView{rgb.data() + k * h * w * 3, static_cast<int>(h), static_cast<int>(w), 3,
                                        static_cast<ptrdiff_t>(w) * 3});
    } else {
      CopyPlane(pic.y, pic.y_stride, 1, pic.height, pic.width, y.data() + k * h * w);
      CopyPlane(pic.u, pic.uv_stride, pic.uv_step, static_cast<int>(ch), static_cast<int>(cw), u.data() + k * ch * cw);
      CopyPlane(pic.v, pic.uv_stride, pic.uv_step, static_cast<int>(ch), static_cast<int>(cw), v.data() + k * ch * cw);
    }
    return Status::OK();
  };
  Status status;
  {
    nb::gil_scoped_release release;
    if (gpu >= 0) {
      status = DecodeOnNvdec(p, index, frames, format, gpu, &rgb, &y, &u, &v);
    } else {
      Result<std::unique_ptr<VideoDecoder>> decoder = VideoDecoder::Open(p, index);
      status = decoder.ok() ? (*decoder)->Decode(frames, out) : decoder.status();
    }
  }
  if (!status.ok()) ThrowBatchStatus(status.WithPrefix(p));
  if (format == "rgb") return nb::cast(ToNumpy(&rgb, {n, h, w, size_t{3}}));
  return nb::make_tuple(ToNumpy(&y, {n, h, w}), ToNumpy(&u, {n, ch, cw}), ToNumpy(&v, {n, ch, cw}));
}

}  // namespace

void RegisterVideo(nb::module_& m) {
  m.def("_videos", &MakeVideos, nb::arg("videos"), nb::arg("classes"), nb::arg("length"), nb::arg("stride"),
        nb::arg("step"), nb::arg("per_video"), nb::arg("skip_bad"), nb::arg("threads"), nb::arg("index_cache").none(),
        "A clip source over (path, label) videos; per_video > 0 draws that many random clips per video and epoch. "
        "Returns (source, [(path, reason) of videos left out], [frames of each video]).");
  m.def("read_video_frames", &ReadVideoFrames, nb::arg("path"), nb::arg("frames"), nb::arg("format") = "rgb",
        nb::arg("device") = "cpu",
        "Decodes frames (indices in presentation order, ascending) on the CPU (libavcodec) or NVDEC ('cuda'): "
        "(N, H, W, 3) RGB, or the (Y, U, V) planes of 'yuv420p', in host memory.");
  m.def(
      "_clip_frames",
      [](const PySource& source, int64_t index, uint64_t seed, int64_t epoch) {
        const auto* clips = dynamic_cast<const ClipSource*>(source.source.get());
        if (clips == nullptr) Raise(PyExc_TypeError, "not a video clip source");
        if (index < 0 || index >= clips->size()) Raise(PyExc_IndexError, "clip index out of range");
        const Clip c = clips->ClipAt(index, seed, epoch);
        std::vector<int64_t> frames;
        for (int k = 0; k < c.length; ++k) frames.push_back(c.Frame(k));
        return nb::make_tuple(c.video, frames);
      },
      nb::arg("source"), nb::arg("index"), nb::arg("seed"), nb::arg("epoch"),
      "(video, frames) of clip `index` in epoch `epoch`.");

  m.def(
      "video_index",
      [](nb::handle path) {
        const std::string p = PathFromPy(path, "path");
        Result<VideoIndex> index = [&] {
          nb::gil_scoped_release release;
          return IndexVideo(p);
        }();
        return IndexToDict(UnwrapFor(p, std::move(index)));
      },
      nb::arg("path"), "The frames, timestamps and key frames of a video's stream (no picture decoded).");
}

}  // namespace sluice::python
