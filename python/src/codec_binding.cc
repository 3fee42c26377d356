// Codec and single-sample entry points: the dataset generator encodes with encode_jpeg; tests
// compare decode/process_sample against PIL and torchvision on the same parameters.
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include <cstring>

#include "bindings.h"
#include "codec/decoder.h"
#include "codec/jpeg_cpu.h"
#include "core/rng.h"
#include "ops/transform_ops.h"
#include "pipeline/plan.h"
#include "pipeline/sample_processor.h"

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

nb::dict MapToDict(const AxisMap& m) {
  nb::dict d;
  d["in_lo"] = m.in_lo;
  d["in_hi"] = m.in_hi;
  d["origin"] = m.origin;
  d["scale"] = m.scale;
  d["resized_len"] = m.resized_len;
  d["out_off"] = m.out_off;
  d["out_len"] = m.out_len;
  d["flip"] = m.flip;
  d["identity"] = m.identity;
  return d;
}

// What the loader would draw for one sample of a width x height image (raises on errors).
SampleGeometry DrawSample(const std::vector<transforms::Transform>& list, int width, int height, const SampleKey& key) {
  Plan plan = Unwrap(Plan::Create(list));
  SampleGeometry g;
  Check(plan.Draw(width, height, key, &g));
  return g;
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
      "draw_geometry",
      [](std::vector<transforms::Transform> list, int width, int height, uint64_t seed,
         uint64_t epoch, uint64_t index) {
        const SampleGeometry g = DrawSample(std::move(list), width, height, SampleKey{seed, epoch, index});
        nb::list out;
        for (int i = 0; i < g.num_segments; ++i) {
          const ResizeParams& p = g.segments[static_cast<size_t>(i)];
          nb::dict d;
          d["x"] = MapToDict(p.x);
          d["y"] = MapToDict(p.y);
          d["filter"] = p.filter == Filter::kBilinear ? "bilinear" : "bicubic";
          d["antialias"] = p.antialias;
          d["fill"] = nb::make_tuple(p.fill[0], p.fill[1], p.fill[2]);
          const WarpParams& w = g.warps[static_cast<size_t>(i)];
          if (w.enabled) {
            nb::dict wd;
            wd["filter"] = w.filter == WarpFilter::kNearest ? "nearest" : "bilinear";
            wd["source"] = nb::make_tuple(w.src_w, w.src_h);
            wd["matrix"] = nb::make_tuple(w.m[0], w.m[1], w.m[2], w.m[3], w.m[4], w.m[5]);
            wd["fill"] = nb::make_tuple(w.fill[0], w.fill[1], w.fill[2]);
            wd["x"] = nb::make_tuple(w.x.off, w.x.len, w.x.flip);
            wd["y"] = nb::make_tuple(w.y.off, w.y.len, w.y.flip);
            wd["pad_fill"] = nb::make_tuple(w.pad_fill[0], w.pad_fill[1], w.pad_fill[2]);
            d["warp"] = wd;
          }
          out.append(d);
        }
        return out;
      },
      nb::arg("transforms"), nb::arg("width"), nb::arg("height"), nb::arg("seed") = 0,
      nb::arg("epoch") = 0, nb::arg("index") = 0,
      "The per-sample geometry the loader would draw (resampling segments, full resolution).");

  m.def(
      "draw_color",
      [](std::vector<transforms::Transform> list, int width, int height, uint64_t seed,
         uint64_t epoch, uint64_t index) {
        const SampleGeometry g = DrawSample(std::move(list), width, height, SampleKey{seed, epoch, index});
        static const char* kNames[] = {"brightness", "contrast", "saturation", "hue", "grayscale",
                                       "posterize", "solarize", "autocontrast", "equalize"};
        nb::list out;
        auto colors = [&](const ColorOps& ops) {
          for (int i = 0; i < ops.num_steps; ++i) {
            const ColorStep& s = ops.steps[i];
            out.append(nb::make_tuple(kNames[static_cast<int>(s.kind)], s.factor));
          }
        };
        for (int k = 0; k < g.passes.num; ++k) {
          colors(g.passes.before[k]);
          const FilterStep& f = g.passes.filters[k];
          if (f.kind == FilterKind::kGaussianBlur) {
            out.append(nb::make_tuple("gaussian_blur", f.sigma, nb::make_tuple(f.kx, f.ky)));
          } else if (f.kind == FilterKind::kSharpness) {
            out.append(nb::make_tuple("sharpness", 1.0 - static_cast<double>(f.alpha)));
          } else {
            const WarpParams& w = f.warp;
            out.append(nb::make_tuple("affine", nb::make_tuple(w.m[0], w.m[1], w.m[2], w.m[3], w.m[4], w.m[5]),
                                      w.filter == WarpFilter::kNearest ? "nearest" : "bilinear"));
          }
        }
        colors(g.color);
        return out;
      },
      nb::arg("transforms"), nb::arg("width"), nb::arg("height"), nb::arg("seed") = 0,
      nb::arg("epoch") = 0, nb::arg("index") = 0,
      "The per-sample pixel steps the loader would draw, in the order they run: (name, factor) for "
      "colour steps (posterize: its bit mask; solarize: its threshold), ('gaussian_blur', sigma, "
      "(kx, ky)), ('sharpness', factor), ('affine', inverse matrix, filter).");

  m.def(
      "draw_augment",
      [](std::vector<transforms::Transform> list, int width, int height, uint64_t seed, uint64_t epoch,
         uint64_t index) {
        // Each RandAugment / TrivialAugmentWide's ops, drawn from its own stream, for the image it
        // is given (the size the list's geometry gives; pixel-stage ops keep it).
        const SampleGeometry g = DrawSample(list, width, height, SampleKey{seed, epoch, index});
        const int last = g.num_segments - 1;
        const int w = g.out_width(last), h = g.out_height(last);
        nb::list out;
        for (size_t i = 0; i < list.size(); ++i) {
          SampleRng rng(seed, epoch, index, static_cast<uint32_t>(i));
          nb::list ops;
          if (const auto* ra = std::get_if<transforms::RandAugment>(&list[i])) {
            AugmentDraw d[8];
            const int n = DrawRandAugment(rng, w, h, *ra, d);
            for (int k = 0; k < n; ++k) ops.append(nb::make_tuple(AugmentOpName(d[k].op), d[k].magnitude));
          } else if (const auto* ta = std::get_if<transforms::TrivialAugmentWide>(&list[i])) {
            const AugmentDraw d = DrawTrivialAugment(rng, *ta);
            ops.append(nb::make_tuple(AugmentOpName(d.op), d.magnitude));
          } else {
            continue;
          }
          out.append(ops);
        }
        return out;
      },
      nb::arg("transforms"), nb::arg("width"), nb::arg("height"), nb::arg("seed") = 0,
      nb::arg("epoch") = 0, nb::arg("index") = 0,
      "The ops each RandAugment and TrivialAugmentWide of the list draws for a sample, in list order: "
      "a list of (torchvision op name, signed magnitude) per transform.");

  m.def(
      "draw_erase",
      [](std::vector<transforms::Transform> list, int width, int height, uint64_t seed,
         uint64_t epoch, uint64_t index) {
        const SampleGeometry g = DrawSample(list, width, height, SampleKey{seed, epoch, index});
        nb::list out;
        for (int i = 0; i < g.erase.num; ++i) {
          const EraseRect& r = g.erase.rects[i];
          out.append(nb::make_tuple(r.x0, r.y0, r.x1, r.y1, r.finished,
                                    r.finished ? nb::make_tuple(r.value[0], r.value[1], r.value[2])
                                               : nb::make_tuple(r.pixel[0], r.pixel[1], r.pixel[2])));
        }
        return out;
      },
      nb::arg("transforms"), nb::arg("width"), nb::arg("height"), nb::arg("seed") = 0,
      nb::arg("epoch") = 0, nb::arg("index") = 0,
      "The per-sample erased rectangles the loader would draw: (x0, y0, x1, y1, finished, value): "
      "finished rectangles set the output to value, the others set the RGB8 pixels to it.");

  m.def(
      "draw_affine",
      [](std::vector<transforms::Transform> list, int width, int height, uint64_t seed,
         uint64_t epoch, uint64_t index) {
        const SampleGeometry g = DrawSample(list, width, height, SampleKey{seed, epoch, index});
        // The k-th warp of the geometry is the k-th warp transform of the list; each drew its
        // parameters from its own stream, for the size of the image it was given.
        nb::list out;
        int k = 0;
        for (size_t i = 0; i < list.size(); ++i) {
          const auto* rot = std::get_if<transforms::RandomRotation>(&list[i]);
          const auto* aff = std::get_if<transforms::RandomAffine>(&list[i]);
          if (rot == nullptr && aff == nullptr) continue;
          while (k < g.num_segments && !g.warps[static_cast<size_t>(k)].enabled) ++k;
          if (k == g.num_segments) Check(Internal("draw_affine: fewer warps than warp transforms"));
          const WarpParams& w = g.warps[static_cast<size_t>(k++)];
          SampleRng rng(seed, epoch, index, static_cast<uint32_t>(i));
          const AffineDraw d = rot != nullptr ? DrawRotation(rng, *rot) : DrawAffine(rng, w.src_w, w.src_h, *aff);
          nb::dict r;
          r["transform"] = rot != nullptr ? "RandomRotation" : "RandomAffine";
          r["angle"] = rot != nullptr ? -d.angle : d.angle;
          r["translate"] = nb::make_tuple(d.tx, d.ty);
          r["scale"] = d.scale;
          r["shear"] = nb::make_tuple(d.shear_x, d.shear_y);
          r["size"] = nb::make_tuple(w.src_w, w.src_h);
          out.append(r);
        }
        return out;
      },
      nb::arg("transforms"), nb::arg("width"), nb::arg("height"), nb::arg("seed") = 0,
      nb::arg("epoch") = 0, nb::arg("index") = 0,
      "The per-sample parameters of the list's RandomRotation and RandomAffine, in list order, in "
      "torchvision's terms (rotate's angle for RandomRotation, affine's for RandomAffine), with the "
      "(width, height) of the image each was given.");

  m.def(
      "process_sample",
      [](nb::bytes data, std::vector<transforms::Transform> list, uint64_t seed, uint64_t epoch,
         uint64_t index, const std::string& dtype, const std::string& layout, bool dct_scaling) {
        Plan plan = Unwrap(Plan::Create(std::move(list)));
        NormalizeParams finish;
        finish.dtype = Unwrap(ParseDType(dtype));
        finish.layout = Unwrap(ParseLayout(layout));
        if (plan.normalize()) {
          finish.normalize = true;
          for (size_t c = 0; c < 3; ++c) {
            finish.mean[c] = plan.normalize()->mean[c];
            finish.std[c] = plan.normalize()->std[c];
          }
        }
        SampleProcessor processor(plan, finish, dct_scaling);
        Tensor out;
        auto slot = [&](int h, int w) -> Result<void*> {
          out = Tensor::Empty(finish.layout == Layout::kNCHW ? std::vector<int64_t>{3, h, w}
                                                             : std::vector<int64_t>{h, w, 3},
                              finish.dtype);
          return out.data();
        };
        WorkerScratch scratch;
        StageCounters counters;
        std::string bytes(data.c_str(), data.size());
        Status s;
        {
          nb::gil_scoped_release release;
          s = processor.Process(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(),
                                SampleKey{seed, epoch, index}, &scratch, slot, &counters);
        }
        Check(s);
        return PyTensor{out};
      },
      nb::arg("data"), nb::arg("transforms"), nb::arg("seed") = 0, nb::arg("epoch") = 0,
      nb::arg("index") = 0, nb::arg("dtype") = "uint8", nb::arg("layout") = "NHWC",
      nb::arg("dct_scaling") = true,
      "Runs one encoded image through the loader's per-sample path; returns a DLPackTensor.");
}

}  // namespace sluice::python
