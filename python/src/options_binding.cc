// sluice._core.LoaderOptions: the C++ LoaderOptions as one object, its fields read and written
// by name. Values are converted here (a wrong type is a TypeError naming the field; an unknown
// name, such as dtype='int7', a ValueError from the C++ parser) and checked, with the automatic
// values resolved, when the loader is made (CheckOptions, ResolveOptions).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <climits>
#include <optional>
#include <string>

#include "bindings.h"
#include "sluice/loader_options.h"

namespace sluice::python {

namespace {

std::string Describe(nb::handle v) {
  return std::string(Py_TYPE(v.ptr())->tp_name) + ": " + nb::cast<std::string>(nb::repr(v));
}

// A property for an int field.
template <auto member>
void IntField(nb::class_<LoaderOptions>& c, const char* name) {
  c.def_prop_rw(
      name, [](const LoaderOptions& o) { return o.*member; },
      [name](LoaderOptions& o, nb::handle v) { o.*member = static_cast<int>(ToInt(name, v, INT_MIN, INT_MAX)); });
}

// A property for an int64 field.
template <auto member>
void Int64Field(nb::class_<LoaderOptions>& c, const char* name) {
  c.def_prop_rw(
      name, [](const LoaderOptions& o) { return o.*member; },
      [name](LoaderOptions& o, nb::handle v) { o.*member = ToInt(name, v, LLONG_MIN, LLONG_MAX); });
}

// A property for an int field that may be left to the loader: None or "auto".
template <auto member>
void AutoIntField(nb::class_<LoaderOptions>& c, const char* name) {
  c.def_prop_rw(
      name, [](const LoaderOptions& o) { return o.*member; },
      [name](LoaderOptions& o, nb::handle v) {
        const bool automatic = v.is_none() || (nb::isinstance<nb::str>(v) && nb::cast<std::string>(v) == "auto");
        o.*member = automatic ? std::nullopt : std::optional<int>(static_cast<int>(ToInt(name, v, INT_MIN, INT_MAX)));
      });
}

// A property for a bool field: True or False (NumPy's too), not any object's truth value
// (dct_scaling="no" would be True).
template <auto member>
void BoolField(nb::class_<LoaderOptions>& c, const char* name) {
  c.def_prop_rw(
      name, [](const LoaderOptions& o) { return o.*member; },
      [name](LoaderOptions& o, nb::handle v) {
        const std::string type = Py_TYPE(v.ptr())->tp_name;  // NumPy's: numpy.bool_, numpy.bool
        if (!PyBool_Check(v.ptr()) && type != "numpy.bool_" && type != "numpy.bool")
          Raise(PyExc_TypeError, std::string(name) + " must be a bool, got " + Describe(v));
        o.*member = PyObject_IsTrue(v.ptr()) == 1;
      });
}

// A property for an enum field, by name: `parse` and `name_of` are the C++ name table's.
template <auto member, auto parse, auto name_of>
void NameField(nb::class_<LoaderOptions>& c, const char* name) {
  c.def_prop_rw(
      name, [](const LoaderOptions& o) { return std::string(name_of(o.*member)); },
      [name](LoaderOptions& o, nb::handle v) {
        if (!nb::isinstance<nb::str>(v))
          Raise(PyExc_TypeError, std::string(name) + " must be a string, got " + Describe(v));
        o.*member = Unwrap(parse(nb::cast<std::string>(v)));
      });
}

}  // namespace

void RegisterLoaderOptions(nb::module_& m) {
  nb::class_<LoaderOptions> c(m, "LoaderOptions", "How a loader runs (sluice/loader_options.h)");
  c.def(nb::init<>());
  IntField<&LoaderOptions::batch_size>(c, "batch_size");
  BoolField<&LoaderOptions::shuffle>(c, "shuffle");
  c.def_prop_rw(
      "seed", [](const LoaderOptions& o) { return o.seed; },
      [](LoaderOptions& o, nb::handle v) {
        if (!PyLong_Check(v.ptr()) || PyBool_Check(v.ptr()))
          Raise(PyExc_TypeError, "seed must be an int in [0, 2**64), got " + Describe(v));
        const unsigned long long x = PyLong_AsUnsignedLongLong(v.ptr());
        if (x == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
          PyErr_Clear();
          Raise(PyExc_ValueError, "seed must be an int in [0, 2**64), got " + nb::cast<std::string>(nb::repr(v)));
        }
        o.seed = x;
      });
  NameField<&LoaderOptions::last_batch, ParseLastBatch, LastBatchName>(c, "last_batch");
  NameField<&LoaderOptions::dtype, ParseDType, DTypeName>(c, "dtype");
  NameField<&LoaderOptions::layout, ParseLayout, LayoutName>(c, "layout");
  NameField<&LoaderOptions::on_error, ParseOnError, OnErrorName>(c, "on_error");
  NameField<&LoaderOptions::decode_route, ParseDecodeRoute, DecodeRouteName>(c, "decode_route");
  c.def_prop_rw(
      "device", [](const LoaderOptions& o) { return o.device.ToString(); },
      [](LoaderOptions& o, nb::handle v) {
        if (!nb::isinstance<nb::str>(v)) Raise(PyExc_TypeError, "device must be a string, got " + Describe(v));
        o.device = Unwrap(ParseDevice(nb::cast<std::string>(v)));
      });
  AutoIntField<&LoaderOptions::num_threads>(c, "num_threads");
  AutoIntField<&LoaderOptions::io_threads>(c, "io_threads");
  AutoIntField<&LoaderOptions::prefetch>(c, "prefetch");
  IntField<&LoaderOptions::rank>(c, "rank");
  IntField<&LoaderOptions::world_size>(c, "world_size");
  BoolField<&LoaderOptions::dct_scaling>(c, "dct_scaling");
  Int64Field<&LoaderOptions::gpu_memory_budget>(c, "gpu_memory_budget");
  Int64Field<&LoaderOptions::max_file_bytes>(c, "max_file_bytes");
  Int64Field<&LoaderOptions::memory_cache_bytes>(c, "memory_cache_bytes");
}

}  // namespace sluice::python
