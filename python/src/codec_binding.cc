// Codec entry points: the dataset generator encodes with encode_jpeg; tests compare decode
// against PIL on the same files; the GPU benchmark measures the JPEG engines' own rate.
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstring>

#include "bindings.h"
#include "codec/decoder.h"
#include "codec/engine_rate.h"
#include "codec/jpeg_cpu.h"

namespace sluice::python {

namespace {

using U8Array = nb::ndarray<nb::numpy, uint8_t>;

U8Array ToNumpy(std::vector<uint8_t>&& pixels, size_t h, size_t w) {
  auto* owned = new std::vector<uint8_t>(std::move(pixels));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<uint8_t>*>(p); });
  return U8Array(owned->data(), {h, w, size_t{3}}, owner);
}

nb::dict InfoToDict(const ImageInfo& info) {
  nb::dict d;
  d["format"] = ImageFormatName(info.format);
  d["width"] = info.width;
  d["height"] = info.height;
  d["orientation"] = info.orientation;
  d["components"] = info.components;
  d["progressive"] = info.progressive;
  d["subsampling"] = info.subsampling;
  return d;
}

nb::dict EngineRateToDict(const EngineRate& rate) {
  nb::dict d;
  d["images"] = rate.images;
  d["pixels"] = rate.pixels;
  d["seconds"] = rate.seconds;
  d["files"] = rate.files;
  d["engines"] = rate.engines;
  d["call_width"] = rate.call_width;
  d["handles"] = rate.handles;
  return d;
}

}  // namespace

void RegisterCodec(nb::module_& m) {
  m.def("image_info", [](nb::bytes data) {
    ImageDecoder decoder;
    return InfoToDict(Unwrap(decoder.ReadHeader(static_cast<const uint8_t*>(data.data()), data.size())));
  });

  m.def(
      "decode",
      [](nb::bytes data, std::optional<std::tuple<int, int, int, int>> roi, int scale_denom) {
        ImageDecoder decoder;
        const auto* p = static_cast<const uint8_t*>(data.data());
        const ImageInfo info = Unwrap(decoder.ReadHeader(p, data.size()));
        DecodeRequest req;
        req.scale_denom = scale_denom;
        if (roi) {
          req.roi = Rect{std::get<0>(*roi), std::get<1>(*roi), std::get<2>(*roi), std::get<3>(*roi)};
        } else {
          req.roi = Rect{0, 0, ScaledSize(info.width, scale_denom), ScaledSize(info.height, scale_denom)};
        }
        std::vector<uint8_t> pixels;
        const Rect r = Unwrap(decoder.Decode(req, &pixels));
        return nb::make_tuple(ToNumpy(std::move(pixels), static_cast<size_t>(r.h), static_cast<size_t>(r.w)),
                              nb::make_tuple(r.x, r.y, r.w, r.h));
      },
      nb::arg("data"), nb::arg("roi") = nb::none(), nb::arg("scale_denom") = 1,
      "Decodes stored pixels (no EXIF rotation) as RGB8; returns (array, (x, y, w, h)).");

  m.def(
      "encode_jpeg",
      [](nb::ndarray<uint8_t, nb::c_contig, nb::device::cpu> image, int quality,
         const std::string& subsampling, bool progressive, int exif_orientation) {
        if (image.ndim() != 2 && !(image.ndim() == 3 && (image.shape(2) == 3 || image.shape(2) == 1)))
          Check(InvalidArgument("encode_jpeg: expected an HxW or HxWx3 uint8 array"));
        ImageView view;
        view.data = image.data();
        view.height = static_cast<int>(image.shape(0));
        view.width = static_cast<int>(image.shape(1));
        view.channels = image.ndim() == 3 ? static_cast<int>(image.shape(2)) : 1;
        view.row_stride = static_cast<ptrdiff_t>(view.width) * view.channels;
        Result<std::vector<uint8_t>> r = [&] {
          nb::gil_scoped_release release;
          return EncodeJpeg(view, quality, subsampling.c_str(), progressive, exif_orientation);
        }();
        std::vector<uint8_t> bytes = Unwrap(std::move(r));
        return nb::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      },
      nb::arg("image"), nb::arg("quality") = 90, nb::arg("subsampling") = "420",
      nb::arg("progressive") = false, nb::arg("exif_orientation") = 1);

  m.def(
      "_engine_rate",
      [](const std::vector<nb::bytes>& files, double seconds, int device, int images_per_engine, int handles) {
        if (!(seconds > 0)) Check(InvalidArgument("_engine_rate: seconds must be > 0"));
        if (images_per_engine < 1) Check(InvalidArgument("_engine_rate: images_per_engine must be >= 1"));
        if (handles < 1 || handles > 16) Check(InvalidArgument("_engine_rate: handles must be 1 to 16, not ", handles));
        std::vector<std::vector<uint8_t>> copies;
        copies.reserve(files.size());
        for (const nb::bytes& f : files) {
          const auto* p = static_cast<const uint8_t*>(f.data());
          copies.emplace_back(p, p + f.size());
        }
        Result<EngineRate> r = [&] {
          nb::gil_scoped_release release;
          return MeasureEngineRate(copies, seconds, device, images_per_engine, handles);
        }();
        return EngineRateToDict(Unwrap(std::move(r)));
      },
      nb::arg("files"), nb::arg("seconds"), nb::arg("device") = 0, nb::arg("images_per_engine") = 32,
      nb::arg("handles") = 1,
      "The JPEG engines' rate in a bare loop over whole images, in `handles` loops at once (codec/engine_rate.h).");

}

}  // namespace sluice::python
