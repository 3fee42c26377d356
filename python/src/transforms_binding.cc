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

namespace {

// A Python callable as a SampleFunction. `runner` (made by sluice.transforms.Lambda) wraps the
// sample's memory as an array, calls the user's function, checks and copies back what it
// returns, and returns None or an error message; the GIL is held only for that.
class PySampleFunction : public SampleFunction {
 public:
  explicit PySampleFunction(nb::object runner) : runner_(std::move(runner)) {}
  ~PySampleFunction() override {
    nb::gil_scoped_acquire gil;
    runner_.reset();
  }

  Status Call(void* data, int height, int width, DType dtype, Layout layout) const override {
    nb::gil_scoped_acquire gil;
    const size_t bytes = static_cast<size_t>(height) * static_cast<size_t>(width) * 3 * DTypeSize(dtype);
    try {
      nb::object view = nb::steal(PyMemoryView_FromMemory(static_cast<char*>(data),
                                                          static_cast<Py_ssize_t>(bytes), PyBUF_WRITE));
      if (!view.is_valid()) throw nb::python_error();
      nb::object shape = layout == Layout::kNHWC ? nb::make_tuple(height, width, 3) : nb::make_tuple(3, height, width);
      nb::object error = runner_(view, shape, DTypeName(dtype));
      if (error.is_none()) return Status::OK();
      return InvalidArgument(nb::cast<std::string>(error));
    } catch (nb::python_error& e) {  // the runner itself failed (it catches the function's errors)
      const std::string what = e.what();
      return Internal("user function: ", what.substr(0, what.find('\n')));
    }
  }

 private:
  nb::object runner_;
};

}  // namespace

void RegisterTransforms(nb::module_& m) {
  nb::module_ t = m.def_submodule("transforms", "transform descriptions");
  nb::enum_<Interpolation>(t, "Interpolation")
      .value("BILINEAR", Interpolation::kBilinear)
      .value("BICUBIC", Interpolation::kBicubic)
      .value("NEAREST", Interpolation::kNearest);

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
  nb::class_<RandomRotation>(t, "RandomRotation")
      .def(nb::init<>())
      .def_rw("degrees", &RandomRotation::degrees)
      .def_rw("interpolation", &RandomRotation::interpolation)
      .def_rw("fill", &RandomRotation::fill)
      .def_rw("has_center", &RandomRotation::has_center)
      .def_rw("center", &RandomRotation::center);
  nb::class_<RandomAffine>(t, "RandomAffine")
      .def(nb::init<>())
      .def_rw("degrees", &RandomAffine::degrees)
      .def_rw("translate", &RandomAffine::translate)
      .def_rw("scale", &RandomAffine::scale)
      .def_rw("shear", &RandomAffine::shear)
      .def_rw("interpolation", &RandomAffine::interpolation)
      .def_rw("fill", &RandomAffine::fill)
      .def_rw("has_center", &RandomAffine::has_center)
      .def_rw("center", &RandomAffine::center);
  nb::class_<ColorJitter>(t, "ColorJitter")
      .def(nb::init<>())
      .def_rw("brightness", &ColorJitter::brightness)
      .def_rw("contrast", &ColorJitter::contrast)
      .def_rw("saturation", &ColorJitter::saturation)
      .def_rw("hue", &ColorJitter::hue);
  nb::class_<RandomGrayscale>(t, "RandomGrayscale")
      .def(nb::init<>())
      .def_rw("p", &RandomGrayscale::p);
  nb::class_<GaussianBlur>(t, "GaussianBlur")
      .def(nb::init<>())
      .def_rw("kernel_w", &GaussianBlur::kernel_w)
      .def_rw("kernel_h", &GaussianBlur::kernel_h)
      .def_rw("sigma", &GaussianBlur::sigma);
  nb::class_<RandAugment>(t, "RandAugment")
      .def(nb::init<>())
      .def_rw("num_ops", &RandAugment::num_ops)
      .def_rw("magnitude", &RandAugment::magnitude)
      .def_rw("num_magnitude_bins", &RandAugment::num_magnitude_bins)
      .def_rw("interpolation", &RandAugment::interpolation)
      .def_rw("fill", &RandAugment::fill);
  nb::class_<TrivialAugmentWide>(t, "TrivialAugmentWide")
      .def(nb::init<>())
      .def_rw("num_magnitude_bins", &TrivialAugmentWide::num_magnitude_bins)
      .def_rw("interpolation", &TrivialAugmentWide::interpolation)
      .def_rw("fill", &TrivialAugmentWide::fill);
  nb::class_<GridMask>(t, "GridMask")
      .def(nb::init<>())
      .def_rw("tile", &GridMask::tile)
      .def_rw("ratio", &GridMask::ratio)
      .def_rw("angle", &GridMask::angle)
      .def_rw("shift_x", &GridMask::shift_x)
      .def_rw("shift_y", &GridMask::shift_y);
  nb::class_<GaussianNoise>(t, "GaussianNoise")
      .def(nb::init<>())
      .def_rw("mean", &GaussianNoise::mean)
      .def_rw("sigma", &GaussianNoise::sigma)
      .def_rw("clip", &GaussianNoise::clip);
  nb::class_<Cutout>(t, "Cutout")
      .def(nb::init<>())
      .def_rw("n_holes", &Cutout::n_holes)
      .def_rw("length", &Cutout::length);
  nb::class_<RandomErasing>(t, "RandomErasing")
      .def(nb::init<>())
      .def_rw("p", &RandomErasing::p)
      .def_rw("scale", &RandomErasing::scale)
      .def_rw("ratio", &RandomErasing::ratio)
      .def_rw("value", &RandomErasing::value)
      .def_rw("tensor_scale", &RandomErasing::tensor_scale);
  nb::class_<Normalize>(t, "Normalize")
      .def(nb::init<>())
      .def_rw("mean", &Normalize::mean)
      .def_rw("std", &Normalize::std);

  nb::class_<Lambda>(t, "Lambda")
      .def("__init__",
           [](Lambda* l, nb::object runner, bool finished, std::string name) {
             new (l) Lambda{std::make_shared<PySampleFunction>(std::move(runner)),
                            finished ? SampleFunction::Stage::kFinished : SampleFunction::Stage::kPixels,
                            std::move(name)};
           },
           nb::arg("runner"), nb::arg("finished"), nb::arg("name"))
      .def_ro("name", &Lambda::name);

  t.def("validate", [](const Transform& tr) { Check(Validate(tr)); });
}

}  // namespace sluice::python
