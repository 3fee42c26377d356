// Single-sample entry points: what the loader would draw for one sample (draw_*), and one
// encoded image through the loader's per-sample CPU path (process_sample). Tests compare them
// with PIL, torchvision and NumPy oracles on the same parameters.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "bindings.h"
#include "core/rng.h"
#include "ops/affine_ops.h"
#include "kernels/filter/elastic.h"
#include "ops/augment_ops.h"
#include "pipeline/plan.h"
#include "pipeline/sample_processor.h"

namespace sluice::python {

namespace {

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

nb::list GeometryOf(std::vector<transforms::Transform> list, int width, int height, uint64_t seed, uint64_t epoch,
                   uint64_t index) {
  const SampleGeometry g = DrawSample(std::move(list), width, height, SampleKey{seed, epoch, index});
  nb::list out;
  for (int i = 0; i < g.num_segments; ++i) {
    const ResizeParams& p = g.segments[static_cast<size_t>(i)];
    nb::dict d;
    d["x"] = MapToDict(p.x);
    d["y"] = MapToDict(p.y);
    d["filter"] = p.filter == Filter::kBilinear ? "bilinear" : p.filter == Filter::kBicubic ? "bicubic" : "nearest";
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
      wd["perspective"] = w.perspective ? nb::object(nb::make_tuple(w.c[0], w.c[1], w.c[2], w.c[3], w.c[4], w.c[5],
                                                                   w.c[6], w.c[7]))
                                        : nb::none();
      d["warp"] = wd;
    }
    out.append(d);
  }
  return out;
}

nb::list PixelStepsOf(std::vector<transforms::Transform> list, int width, int height, uint64_t seed, uint64_t epoch,
                   uint64_t index) {
  const SampleGeometry g = DrawSample(std::move(list), width, height, SampleKey{seed, epoch, index});
  nb::list out;
  auto colors = [&](const ColorOps& ops) {
    for (int i = 0; i < ops.num_steps; ++i) {
      const ColorStep& s = ops.steps[i];
      out.append(nb::make_tuple(ColorKindName(s.kind), s.factor));
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
}

nb::list AugmentOpsOf(std::vector<transforms::Transform> list, int width, int height, uint64_t seed, uint64_t epoch,
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
      AugmentDraw d[kMaxRandAugmentOps];
      const int n = DrawRandAugment(rng, w, h, *ra, d);
      for (int k = 0; k < n; ++k) ops.append(nb::make_tuple(AugmentOpName(d[k].op), d[k].magnitude));
    } else if (const auto* ta = std::get_if<transforms::TrivialAugmentWide>(&list[i])) {
      const AugmentDraw d = DrawTrivialAugment(rng, *ta);
      ops.append(nb::make_tuple(AugmentOpName(d.op), d.magnitude));
    } else if (const auto* aa = std::get_if<transforms::AutoAugment>(&list[i])) {
      AugmentDraw d[2];
      int policy = 0;
      const int n = DrawAutoAugment(rng, w, h, *aa, d, &policy);
      ops.append(nb::make_tuple("Policy", static_cast<double>(policy)));
      for (int k = 0; k < n; ++k) ops.append(nb::make_tuple(AugmentOpName(d[k].op), d[k].magnitude));
    } else {
      continue;
    }
    out.append(ops);
  }
  return out;
}

nb::list ErasedOf(std::vector<transforms::Transform> list, int width, int height, uint64_t seed, uint64_t epoch,
                   uint64_t index) {
  const SampleGeometry g = DrawSample(list, width, height, SampleKey{seed, epoch, index});
  nb::list out;
  for (int i = 0; i < g.erase.num; ++i) {
    const EraseRect& r = g.erase.rects[i];
    out.append(nb::make_tuple(r.x0, r.y0, r.x1, r.y1, r.finished,
                              r.finished ? nb::make_tuple(r.value[0], r.value[1], r.value[2])
                                         : nb::make_tuple(r.pixel[0], r.pixel[1], r.pixel[2])));
  }
  return out;
}

nb::list AffinesOf(std::vector<transforms::Transform> list, int width, int height, uint64_t seed, uint64_t epoch,
                   uint64_t index) {
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
    const AffineParams d = rot != nullptr ? DrawRotation(rng, *rot) : DrawAffine(rng, w.src_w, w.src_h, *aff);
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
}

// The draw of the list's AugMix for one sample: the image's weight, and each chain's weight and
// ops (torchvision's names and magnitudes).
nb::dict AugMixOf(std::vector<transforms::Transform> list, int width, int height, uint64_t seed, uint64_t epoch,
                  uint64_t index) {
  const SampleGeometry g = DrawSample(list, width, height, SampleKey{seed, epoch, index});
  const AugMixDraw& a = g.augmix;
  nb::list chains;
  for (int i = 0; i < a.num_chains; ++i) {
    nb::list ops;
    for (int k = 0; k < a.depth[i]; ++k) ops.append(nb::make_tuple(AugmentOpName(a.ops[i][k].op), a.ops[i][k].magnitude));
    chains.append(nb::make_tuple(a.w[i], ops));
  }
  nb::dict out;
  out["m0"] = a.m0;
  out["chains"] = chains;
  return out;
}

// The displacement (h x w x 2 float32, torchvision's layout) of the list's first ElasticTransform
// for one sample, on the image it is given.
PyTensor ElasticOf(std::vector<transforms::Transform> list, int width, int height, uint64_t seed, uint64_t epoch,
                   uint64_t index) {
  Plan plan = Unwrap(Plan::Create(std::move(list)));
  SampleGeometry g;
  Check(plan.Draw(width, height, SampleKey{seed, epoch, index}, &g));
  const int last = g.num_segments - 1, w = g.out_width(last), h = g.out_height(last);
  for (int k = 0; k < g.passes.num; ++k) {
    const FilterStep& f = g.passes.filters[static_cast<size_t>(k)];
    if (f.kind != FilterKind::kElastic) continue;
    std::vector<float> field;
    std::vector<double> scratch;
    ElasticDisplacement(f, w, h, &field, &scratch);
    Tensor out = Tensor::Empty({h, w, 2}, DType::kFloat32);
    std::copy(field.begin(), field.end(), static_cast<float*>(out.data()));
    return PyTensor{out};
  }
  Check(InvalidArgument("elastic_displacement: the list draws no ElasticTransform for this sample"));
  return PyTensor{};
}

PyTensor ProcessSample(nb::bytes data, std::vector<transforms::Transform> list, uint64_t seed, uint64_t epoch,
                       uint64_t index, const std::string& dtype, const std::string& layout, bool dct_scaling) {
  Plan plan = Unwrap(Plan::Create(std::move(list)));
  const FinishParams finish =
      MakeFinishParams(plan, Unwrap(ParseDType(dtype)), Unwrap(ParseLayout(layout)));
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
}

}  // namespace

void RegisterSample(nb::module_& m) {
  m.def("draw_geometry", &GeometryOf,
        nb::arg("transforms"), nb::arg("width"), nb::arg("height"), nb::arg("seed") = 0,
        nb::arg("epoch") = 0, nb::arg("index") = 0,
        "The per-sample geometry the loader would draw (resampling segments, full resolution).");
  m.def("draw_color", &PixelStepsOf,
        nb::arg("transforms"), nb::arg("width"), nb::arg("height"), nb::arg("seed") = 0,
        nb::arg("epoch") = 0, nb::arg("index") = 0,
        "The per-sample pixel steps the loader would draw, in the order they run: (name, factor) for "
        "colour steps (posterize: its bit mask; solarize: its threshold), ('gaussian_blur', sigma, "
        "(kx, ky)), ('sharpness', factor), ('affine', inverse matrix, filter).");
  m.def("draw_augment", &AugmentOpsOf,
        nb::arg("transforms"), nb::arg("width"), nb::arg("height"), nb::arg("seed") = 0,
        nb::arg("epoch") = 0, nb::arg("index") = 0,
        "The ops each RandAugment, TrivialAugmentWide and AutoAugment of the list draws for a sample, in "
        "list order: a list of (torchvision op name, signed magnitude) per transform; AutoAugment's starts "
        "with ('Policy', the sub-policy's index) and holds the ops that apply.");
  m.def("draw_erase", &ErasedOf,
        nb::arg("transforms"), nb::arg("width"), nb::arg("height"), nb::arg("seed") = 0,
        nb::arg("epoch") = 0, nb::arg("index") = 0,
        "The per-sample erased rectangles the loader would draw: (x0, y0, x1, y1, finished, value): "
        "finished rectangles set the output to value, the others set the RGB8 pixels to it.");
  m.def("draw_affine", &AffinesOf,
        nb::arg("transforms"), nb::arg("width"), nb::arg("height"), nb::arg("seed") = 0,
        nb::arg("epoch") = 0, nb::arg("index") = 0,
        "The per-sample parameters of the list's RandomRotation and RandomAffine, in list order, in "
        "torchvision's terms (rotate's angle for RandomRotation, affine's for RandomAffine), with the "
        "(width, height) of the image each was given.");
  m.def("draw_augmix", &AugMixOf, nb::arg("transforms"), nb::arg("width"), nb::arg("height"), nb::arg("seed") = 0,
        nb::arg("epoch") = 0, nb::arg("index") = 0,
        "The list's AugMix draw for one sample: {'m0': weight of the image, 'chains': [(weight, [(op, "
        "magnitude), ...]), ...]}.");
  m.def("elastic_displacement", &ElasticOf, nb::arg("transforms"), nb::arg("width"), nb::arg("height"),
        nb::arg("seed") = 0, nb::arg("epoch") = 0, nb::arg("index") = 0,
        "The displacement field (h x w x 2 float32, torchvision's layout) of the list's first ElasticTransform.");
  m.def("process_sample", &ProcessSample,
        nb::arg("data"), nb::arg("transforms"), nb::arg("seed") = 0, nb::arg("epoch") = 0,
        nb::arg("index") = 0, nb::arg("dtype") = "uint8", nb::arg("layout") = "NHWC",
        nb::arg("dct_scaling") = true,
        "Runs one encoded image through the loader's per-sample path; returns a DLPackTensor.");
}

}  // namespace sluice::python
