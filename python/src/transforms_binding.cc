// Transform descriptions (sluice/transforms.h) for Python, from the op table: make(name, fields)
// builds any op's description from its fields and checks it (the argument checks live in C++
// only); a description (Spec) reads and writes its fields by name. make_lambda wraps a Python
// callable as a user function.
#include <nanobind/stl/array.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <cstring>
#include <string>

#include "bindings.h"
#include "ops/op_registry.h"
#include "sluice/transforms.h"

namespace sluice::python {

using namespace sluice::transforms;

namespace {

// A Python callable as a SampleFunction. `runner` (made by sluice.transforms.Lambda) wraps the
// sample's memory as an array, calls the user's function with the global generators seeded from
// `seed`, checks and copies back what it returns, and returns None or an error message; the GIL
// is held only for that.
class PySampleFunction : public SampleFunction {
 public:
  explicit PySampleFunction(nb::object runner) : runner_(std::move(runner)) {}
  ~PySampleFunction() override {
    nb::gil_scoped_acquire gil;
    runner_.reset();
  }

  Status Call(void* data, int height, int width, DType dtype, Layout layout, uint64_t seed) const override {
    nb::gil_scoped_acquire gil;
    const size_t bytes = static_cast<size_t>(height) * static_cast<size_t>(width) * 3 * DTypeSize(dtype);
    try {
      nb::object view = nb::steal(PyMemoryView_FromMemory(static_cast<char*>(data),
                                                          static_cast<Py_ssize_t>(bytes), PyBUF_WRITE));
      if (!view.is_valid()) throw nb::python_error();
      nb::object shape = layout == Layout::kNHWC ? nb::make_tuple(height, width, 3) : nb::make_tuple(3, height, width);
      nb::object error = runner_(view, shape, DTypeName(dtype), seed);
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

std::string Repr(nb::handle v) { return nb::cast<std::string>(nb::repr(v)); }

bool IsNumber(nb::handle v) { return (PyLong_Check(v.ptr()) || PyFloat_Check(v.ptr())) && !PyBool_Check(v.ptr()); }

// One scalar of field `f` of op `op` from `v`, stored at `p`. Errors name the op and the field:
// TypeError for a value of the wrong kind, ValueError for one out of range (a float where an
// int is needed, a pixel value outside [0, 255]).
void SetScalar(const char* op, const OpField& f, nb::handle v, void* p) {
  const std::string what = std::string(op) + ": " + f.name;
  switch (f.type) {
    case FieldType::kInt:
    case FieldType::kByte: {
      if (!IsNumber(v)) Raise(PyExc_TypeError, what + " must be an int, got " + Repr(v));
      if (!PyLong_Check(v.ptr())) Raise(PyExc_ValueError, what + " must be an int, got " + Repr(v));
      int overflow = 0;
      const long long x = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
      if (overflow != 0) Raise(PyExc_ValueError, what + " is out of range, got " + Repr(v));
      if (f.type == FieldType::kByte) {
        if (x < 0 || x > 255)
          Raise(PyExc_ValueError, what + " values must be in [0, 255] (pixel values), got " + Repr(v));
        *static_cast<uint8_t*>(p) = static_cast<uint8_t>(x);
      } else {
        if (x < INT32_MIN || x > INT32_MAX) Raise(PyExc_ValueError, what + " is out of range, got " + Repr(v));
        *static_cast<int*>(p) = static_cast<int>(x);
      }
      return;
    }
    case FieldType::kDouble:
    case FieldType::kFloat: {
      if (!IsNumber(v)) Raise(PyExc_TypeError, what + " must be a number, got " + Repr(v));
      const double x = PyFloat_AsDouble(v.ptr());
      if (x == -1.0 && PyErr_Occurred()) throw nb::python_error();
      if (f.type == FieldType::kDouble) {
        *static_cast<double*>(p) = x;
      } else {
        *static_cast<float*>(p) = static_cast<float>(x);
      }
      return;
    }
    case FieldType::kBool: *static_cast<bool*>(p) = PyObject_IsTrue(v.ptr()) == 1; return;
    case FieldType::kInterpolation: {
      if (!nb::isinstance<nb::str>(v)) Raise(PyExc_TypeError, what + " must be a string, got " + Repr(v));
      Result<Interpolation> i = ParseInterpolation(nb::cast<std::string>(v));
      if (!i.ok()) ThrowStatus(i.status().WithPrefix(op));
      *static_cast<Interpolation*>(p) = *i;
      return;
    }
    case FieldType::kPaddingMode: {
      if (!nb::isinstance<nb::str>(v)) Raise(PyExc_TypeError, what + " must be a string, got " + Repr(v));
      Result<PaddingMode> m = ParsePaddingMode(nb::cast<std::string>(v));
      if (!m.ok()) ThrowStatus(m.status().WithPrefix(op));
      *static_cast<PaddingMode*>(p) = *m;
      return;
    }
  }
}

size_t ScalarSize(FieldType t) {
  switch (t) {
    case FieldType::kInt: return sizeof(int);
    case FieldType::kDouble: return sizeof(double);
    case FieldType::kFloat: return sizeof(float);
    case FieldType::kByte: return sizeof(uint8_t);
    case FieldType::kBool: return sizeof(bool);
    case FieldType::kInterpolation: return sizeof(Interpolation);
    case FieldType::kPaddingMode: return sizeof(PaddingMode);
  }
  return 0;
}

void SetField(const char* op, const OpField& f, nb::handle v, Transform* t) {
  void* p = f.address(*t);
  if (f.length == 0) return SetScalar(op, f, v, p);
  if (!PySequence_Check(v.ptr()) || nb::isinstance<nb::str>(v) || nb::len(v) != static_cast<size_t>(f.length))
    Raise(PyExc_TypeError, std::string(op) + ": " + f.name + " must be a sequence of " + std::to_string(f.length) +
                               " values, got " + Repr(v));
  for (int i = 0; i < f.length; ++i)
    SetScalar(op, f, v[static_cast<size_t>(i)], static_cast<uint8_t*>(p) + static_cast<size_t>(i) * ScalarSize(f.type));
}

nb::object GetScalar(FieldType type, const void* p) {
  switch (type) {
    case FieldType::kInt: return nb::int_(*static_cast<const int*>(p));
    case FieldType::kByte: return nb::int_(*static_cast<const uint8_t*>(p));
    case FieldType::kDouble: return nb::float_(*static_cast<const double*>(p));
    case FieldType::kFloat: return nb::float_(*static_cast<const float*>(p));
    case FieldType::kBool: return nb::bool_(*static_cast<const bool*>(p));
    case FieldType::kInterpolation: return nb::str(InterpolationName(*static_cast<const Interpolation*>(p)));
    case FieldType::kPaddingMode: return nb::str(PaddingModeName(*static_cast<const PaddingMode*>(p)));
  }
  return nb::none();
}

nb::object GetField(const OpField& f, Transform* t) {
  const void* p = f.address(*t);
  if (f.length == 0) return GetScalar(f.type, p);
  nb::list out;
  for (int i = 0; i < f.length; ++i)
    out.append(GetScalar(f.type, static_cast<const uint8_t*>(p) + static_cast<size_t>(i) * ScalarSize(f.type)));
  return nb::tuple(out);
}

const OpField* FindField(const OpDef& op, const std::string& name) {
  for (const OpField& f : op.fields)
    if (name == f.name) return &f;
  return nullptr;
}

Transform Make(const std::string& name, nb::dict args) {
  const OpDef* op = ImageOps().FindByName(name);
  // A Lambda is made from its callable (make_lambda), not from fields.
  if (op == nullptr || op->kind == OpKind::kFunction) Raise(PyExc_ValueError, "no transform named '" + name + "'");
  Transform t = op->make();
  for (auto [key, value] : args) {
    const std::string field = nb::cast<std::string>(key);
    const OpField* f = FindField(*op, field);
    if (f == nullptr) Raise(PyExc_TypeError, name + ": no argument '" + field + "'");
    SetField(op->name, *f, value, &t);
  }
  Check(Validate(t));
  return t;
}

}  // namespace

void RegisterTransforms(nb::module_& m) {
  nb::module_ t = m.def_submodule("transforms", "transform descriptions");
  nb::class_<Transform>(t, "Spec", "One transform's description, as the C++ loader takes it")
      .def_prop_ro("name", [](const Transform& s) { return TransformName(s); })
      .def("__getattr__",
           [](Transform& s, const std::string& name) {
             const OpField* f = FindField(ImageOps().Find(s), name);
             if (f == nullptr)
               Raise(PyExc_AttributeError, std::string(TransformName(s)) + " has no field '" + name + "'");
             return GetField(*f, &s);
           })
      .def("__setattr__",
           [](Transform& s, const std::string& name, nb::handle value) {
             const OpDef& op = ImageOps().Find(s);
             const OpField* f = FindField(op, name);
             if (f == nullptr) Raise(PyExc_AttributeError, std::string(op.name) + " has no field '" + name + "'");
             SetField(op.name, *f, value, &s);  // not validated here: the loader validates every spec
           })
      .def("__repr__", [](Transform& s) {
        const OpDef& op = ImageOps().Find(s);
        std::string out = std::string(op.name) + "(";
        for (size_t i = 0; i < op.fields.size(); ++i)
          out += (i ? ", " : "") + std::string(op.fields[i].name) + "=" + Repr(GetField(op.fields[i], &s));
        return out + ")";
      });
  t.def("make", &Make, nb::arg("name"), nb::arg("fields"),
        "The description of transform `name` with the given fields (a dict; the rest default), checked: "
        "ValueError or TypeError naming the transform and the argument.");
  t.def(
      "make_lambda",
      [](nb::object runner, bool finished, std::string name) {
        return Transform(Lambda{std::make_shared<PySampleFunction>(std::move(runner)),
                                finished ? SampleFunction::Stage::kFinished : SampleFunction::Stage::kPixels,
                                std::move(name)});
      },
      nb::arg("runner"), nb::arg("finished"), nb::arg("name"));
  t.def("validate", [](const Transform& s) { Check(Validate(s)); });
}

}  // namespace sluice::python
