// The one place that raises Python exceptions: Status codes mapped to their exception types, and
// the errors of converting Python values.
#include "bindings.h"

namespace sluice::python {

namespace {
PyObject* g_decode_error = nullptr;
}

void RegisterErrors(nb::module_& m) {
  g_decode_error = PyErr_NewExceptionWithDoc(
      "sluice.DecodeError",
      "A sample's file could not be decoded: it is corrupt, truncated, empty, not an image (or not "
      "a regular file), in a format sluice does not decode, or over a size limit. The message "
      "names the file and the reason.",
      PyExc_ValueError, nullptr);
  m.attr("DecodeError") = nb::handle(g_decode_error);
}

void Raise(PyObject* type, const std::string& message) {
  PyErr_SetString(type, message.c_str());
  throw nb::python_error();
}

void ThrowStatus(const Status& status) {
  PyObject* type = PyExc_RuntimeError;
  switch (status.code()) {
    case StatusCode::kInvalidArgument: type = PyExc_ValueError; break;
    case StatusCode::kNotFound: type = PyExc_FileNotFoundError; break;
    case StatusCode::kIOError: type = PyExc_OSError; break;
    case StatusCode::kCorruptData: type = g_decode_error; break;
    case StatusCode::kUnsupported: type = PyExc_NotImplementedError; break;
    case StatusCode::kOutOfRange: type = PyExc_IndexError; break;
    case StatusCode::kResourceExhausted: type = PyExc_MemoryError; break;
    case StatusCode::kDeadlineExceeded: type = PyExc_TimeoutError; break;
    default: type = PyExc_RuntimeError; break;
  }
  PyErr_SetObject(type, MessageToPy(status.message()).ptr());
  throw nb::python_error();
}

long long ToInt(const std::string& name, nb::handle v, long long lo, long long hi) {
  if (!PyLong_Check(v.ptr()) || PyBool_Check(v.ptr()))
    Raise(PyExc_TypeError, name + " must be an int, got " + Py_TYPE(v.ptr())->tp_name + ": " +
                               nb::cast<std::string>(nb::repr(v)));
  int overflow = 0;
  const long long x = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (overflow != 0 || x < lo || x > hi)
    Raise(PyExc_ValueError, name + " is out of range, got " + nb::cast<std::string>(nb::repr(v)));
  return x;
}

void ThrowBatchStatus(const Status& status) {
  if (status.code() != StatusCode::kUnsupported) ThrowStatus(status);
  PyErr_SetObject(g_decode_error, MessageToPy(status.message()).ptr());
  throw nb::python_error();
}

}  // namespace sluice::python
