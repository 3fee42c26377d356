// File paths and messages between C++ (bytes, as the system gives them) and Python (str). Names
// that are not UTF-8 (os.listdir returns them with surrogate escapes) go both ways unchanged;
// messages that hold such a name show its bytes as \xNN.
#include "bindings.h"

namespace sluice::python {

nb::object PathToPy(const std::string& path) {
  PyObject* s = PyUnicode_DecodeFSDefaultAndSize(path.data(), static_cast<Py_ssize_t>(path.size()));
  if (s == nullptr) throw nb::python_error();
  return nb::steal(s);
}

nb::object MessageToPy(const std::string& message) {
  PyObject* s = PyUnicode_DecodeUTF8(message.data(), static_cast<Py_ssize_t>(message.size()), "backslashreplace");
  if (s == nullptr) throw nb::python_error();
  return nb::steal(s);
}

std::string PathFromPy(nb::handle value, const std::string& what) {
  PyObject* fs = PyOS_FSPath(value.ptr());  // str or bytes, from a path-like object too
  if (fs == nullptr) {
    PyErr_Clear();
    Raise(PyExc_TypeError, what + " must be a path (str, bytes or os.PathLike), got " +
                               nb::cast<std::string>(nb::repr(value)));
  }
  nb::object path = nb::steal(fs);
  if (PyBytes_Check(fs)) return std::string(PyBytes_AS_STRING(fs), static_cast<size_t>(PyBytes_GET_SIZE(fs)));
  PyObject* encoded = PyUnicode_EncodeFSDefault(fs);
  if (encoded == nullptr) throw nb::python_error();
  nb::object bytes = nb::steal(encoded);
  return std::string(PyBytes_AS_STRING(encoded), static_cast<size_t>(PyBytes_GET_SIZE(encoded)));
}

}  // namespace sluice::python
