// DLPackTensor: hands a sluice Tensor to torch.from_dlpack / numpy.from_dlpack without a copy,
// in DLPack 1.0's versioned form (writable) to consumers that ask for it.
#include <type_traits>

#include "bindings.h"

namespace sluice::python {

namespace {

// The capsule name of each DLPack form (a consumer that takes the tensor renames it "used_...").
template <typename Managed>
constexpr const char* kCapsuleName = std::is_same_v<Managed, DLManagedTensor> ? "dltensor" : "dltensor_versioned";

// Frees a capsule's tensor unless a consumer took it (and renamed the capsule).
template <typename Managed>
void DeleteUnconsumed(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, kCapsuleName<Managed>)) {
    auto* managed = static_cast<Managed*>(PyCapsule_GetPointer(capsule, kCapsuleName<Managed>));
    if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
  }
}

// `managed` in a capsule of its form's name (freed if no consumer takes it).
template <typename Managed>
nb::object Capsule(Managed* managed) {
  PyObject* capsule = PyCapsule_New(managed, kCapsuleName<Managed>, DeleteUnconsumed<Managed>);
  if (capsule == nullptr) {
    managed->deleter(managed);
    throw nb::python_error();
  }
  return nb::steal(capsule);
}

}  // namespace

void RegisterTensor(nb::module_& m) {
  nb::class_<PyTensor>(m, "DLPackTensor")
      .def(
          "__dlpack__",
          [](const PyTensor& self, nb::args, nb::kwargs kwargs) {
            // A CUDA consumer names its stream: it then waits for the batch, and the batch's
            // memory is released only after that stream's work on it (DeviceSync).
            if (self.tensor.sync() != nullptr) {
              uintptr_t stream = 1;  // None: the legacy default stream (DLPack's convention)
              if (kwargs.contains("stream") && !kwargs["stream"].is_none())
                stream = static_cast<uintptr_t>(nb::cast<int64_t>(kwargs["stream"]));
              if (static_cast<intptr_t>(stream) != -1) Check(self.tensor.sync()->ConsumeOn(stream));
            }
            // A consumer that takes DLPack 1.0 (max_version >= (1, 0): NumPy 2.1, recent torch)
            // gets the versioned form, writable; older ones the unversioned form.
            if (kwargs.contains("max_version") && !kwargs["max_version"].is_none() &&
                nb::cast<int>(nb::tuple(kwargs["max_version"])[0]) >= 1)
              return Capsule(self.tensor.ToDLPackVersioned());
            return Capsule(self.tensor.ToDLPack());
          })
      .def("__dlpack_device__",
           [](const PyTensor& self) {
             const Device d = self.tensor.device();
             return nb::make_tuple(d.type == DeviceType::kCPU ? 1 : 2, d.index);
           })
      .def_prop_ro("shape", [](const PyTensor& self) {
        nb::list out;
        for (int64_t d : self.tensor.shape()) out.append(d);
        return nb::tuple(out);
      })
      .def_prop_ro("dtype", [](const PyTensor& self) { return DTypeName(self.tensor.dtype()); });
}

}  // namespace sluice::python
