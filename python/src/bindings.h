// Registration functions of the sluice._core module, one per bound concept, and the single
// point where a Status becomes a Python exception.
#ifndef SLUICE_PYTHON_BINDINGS_H_
#define SLUICE_PYTHON_BINDINGS_H_

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>  // in every file: nb::cast<std::string> must mean one thing

#include <string>

#include <memory>

#include "io/webdataset_layout.h"
#include "sluice/source.h"
#include "sluice/status.h"
#include "sluice/tensor.h"

namespace sluice::python {

namespace nb = nanobind;

void RegisterErrors(nb::module_& m);
void RegisterTensor(nb::module_& m);
void RegisterTransforms(nb::module_& m);
void RegisterLoaderOptions(nb::module_& m);
void RegisterLoader(nb::module_& m);
void RegisterCodec(nb::module_& m);
void RegisterSample(nb::module_& m);
void RegisterShards(nb::module_& m);
void RegisterShardStreams(nb::module_& m);
void RegisterVideo(nb::module_& m);

// A WebDataset spec from the keys as Python gives them ("jpg;jpeg"; label_key "" for none).
WebDatasetSpec SpecOf(const std::string& image_key, const std::string& label_key, const std::string& label_field);

// Raises the Python exception for `status` (REQUIRES: !status.ok()). Never returns.
[[noreturn]] void ThrowStatus(const Status& status);

// Raises the error of taking a batch (REQUIRES: !status.ok()): a file sluice cannot decode (the
// message names it; Unsupported there is a format, not an argument) as sluice.DecodeError, the rest
// as ThrowStatus (a file that cannot be read: OSError). Never returns.
[[noreturn]] void ThrowBatchStatus(const Status& status);

// Raises the Python exception `type` (TypeError for a value of the wrong kind, ...) with
// `message`: for errors of converting Python values, which have no Status. Never returns.
[[noreturn]] void Raise(PyObject* type, const std::string& message);

// A path from C++ (bytes) as Python's os.fsdecode gives it: non-UTF-8 bytes as surrogate escapes,
// so that it names the same file.
nb::object PathToPy(const std::string& path);
// A message (which may hold such a path) as str, with non-UTF-8 bytes shown as \xNN.
nb::object MessageToPy(const std::string& message);
// A path from Python (str, bytes or os.PathLike) as the system's bytes (os.fsencode); TypeError
// naming `what` for anything else.
std::string PathFromPy(nb::handle value, const std::string& what);

// An int in [lo, hi] (a bool is not an int): TypeError naming `name` for another type, ValueError
// for one out of range.
long long ToInt(const std::string& name, nb::handle value, long long lo, long long hi);

// Returns the value or raises.
template <typename T>
T Unwrap(Result<T> r) {
  if (!r.ok()) ThrowStatus(r.status());
  return std::move(r).value();
}
inline void Check(const Status& s) {
  if (!s.ok()) ThrowStatus(s);
}

// transforms::Transform (a std::variant) is bound as a class, sluice._core.transforms.Spec: no file
// of this module includes nanobind/stl/variant.h, whose caster would take its place.

// A source made in C++ (a WebDataset's shards), handed to Loader.create as it is.
struct PySource {
  std::shared_ptr<const Source> source;
};

// A Tensor exposed to Python through the DLPack protocol (__dlpack__, __dlpack_device__).
struct PyTensor {
  Tensor tensor;
};

}  // namespace sluice::python

#endif  // SLUICE_PYTHON_BINDINGS_H_
