// The transform descriptions (sluice/transforms.h) as plain Python value classes. The
// torchvision-shaped classes in sluice.transforms build these.
#include <nanobind/stl/array.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "sluice/transforms.h"

namespace sluice::python {

using namespace sluice::transforms;

void RegisterTransforms(nb::module_& m) {
  nb::module_ t = m.def_submodule("transforms", "transform descriptions");
  nb::enum_<Interpolation>(t, "Interpolation")
      .value("BILINEAR", Interpolation::kBilinear)
      .value("BICUBIC", Interpolation::kBicubic);

  nb::class_<RandomResizedCrop>(t, "RandomResizedCrop")
      .def(nb::init<>())
      .def_rw("height", &RandomResizedCrop::height)
      .def_rw("width", &RandomResizedCrop::width)
      .def_rw("scale", &RandomResizedCrop::scale)
      .def_rw("ratio", &RandomResizedCrop::ratio)
      .def_rw("interpolation", &RandomResizedCrop::interpolation)
      .def_rw("antialias", &RandomResizedCrop::antialias);
  nb::class_<Resize>(t, "Resize")
      .def(nb::init<>())
      .def_rw("height", &Resize::height)
      .def_rw("width", &Resize::width)
      .def_rw("max_size", &Resize::max_size)
      .def_rw("interpolation", &Resize::interpolation)
      .def_rw("antialias", &Resize::antialias);
  nb::class_<CenterCrop>(t, "CenterCrop")
      .def(nb::init<>())
      .def_rw("height", &CenterCrop::height)
      .def_rw("width", &CenterCrop::width);
  nb::class_<RandomCrop>(t, "RandomCrop")
      .def(nb::init<>())
      .def_rw("height", &RandomCrop::height)
      .def_rw("width", &RandomCrop::width)
      .def_rw("padding", &RandomCrop::padding)
      .def_rw("pad_if_needed", &RandomCrop::pad_if_needed)
      .def_rw("fill", &RandomCrop::fill);
  nb::class_<RandomHorizontalFlip>(t, "RandomHorizontalFlip")
      .def(nb::init<>())
      .def_rw("p", &RandomHorizontalFlip::p);
  nb::class_<RandomVerticalFlip>(t, "RandomVerticalFlip")
      .def(nb::init<>())
      .def_rw("p", &RandomVerticalFlip::p);
  nb::class_<Pad>(t, "Pad")
      .def(nb::init<>())
      .def_rw("padding", &Pad::padding)
      .def_rw("fill", &Pad::fill);
  nb::class_<ColorJitter>(t, "ColorJitter")
      .def(nb::init<>())
      .def_rw("brightness", &ColorJitter::brightness)
      .def_rw("contrast", &ColorJitter::contrast)
      .def_rw("saturation", &ColorJitter::saturation)
      .def_rw("hue", &ColorJitter::hue);
  nb::class_<RandomGrayscale>(t, "RandomGrayscale")
      .def(nb::init<>())
      .def_rw("p", &RandomGrayscale::p);
  nb::class_<Normalize>(t, "Normalize")
      .def(nb::init<>())
      .def_rw("mean", &Normalize::mean)
      .def_rw("std", &Normalize::std);

  t.def("validate", [](const Transform& tr) { Check(Validate(tr)); });
}

}  // namespace sluice::python
