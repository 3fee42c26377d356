// Status and Result<T>: how every fallible sluice function reports failure.
//
// A corrupt file, a missing directory or a bad argument is an expected event, not a crash: it
// comes back as a Status whose message names the file (or the argument) and the reason. Only
// sluice's own invariants abort (SLUICE_CHECK).
//
// Thread-safety: Status and Result are values; distinct objects may be used from any thread.
#ifndef SLUICE_STATUS_H_
#define SLUICE_STATUS_H_

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

namespace sluice {

enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument = 1,     // the caller passed something wrong (Python: ValueError)
  kNotFound = 2,            // a path does not exist (Python: FileNotFoundError)
  kIOError = 3,             // reading failed (Python: OSError)
  kCorruptData = 4,         // a file's content is damaged or not an image (sluice.DecodeError)
  kUnsupported = 5,         // valid but not handled, e.g. TIFF (Python: NotImplementedError)
  kOutOfRange = 6,          // an index past the end
  kResourceExhausted = 7,   // memory (Python: MemoryError)
  kFailedPrecondition = 8,  // an operation in the wrong state (Python: RuntimeError)
  kCancelled = 9,
  kInternal = 10,           // a sluice bug (Python: RuntimeError)
  kDeadlineExceeded = 11,   // not done within the time given; nothing happened (Python: TimeoutError)
};

// Short stable name of a code, e.g. "CorruptData".
const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status OK() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "CorruptData: a/b.jpg: premature end of JPEG data"
  std::string ToString() const;

  // Returns a copy whose message is "prefix: message" (used to add the file name).
  Status WithPrefix(std::string_view prefix) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

namespace internal {
template <typename... Args>
std::string StrCat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
}  // namespace internal

template <typename... Args>
Status InvalidArgument(const Args&... a) { return Status(StatusCode::kInvalidArgument, internal::StrCat(a...)); }
template <typename... Args>
Status NotFound(const Args&... a) { return Status(StatusCode::kNotFound, internal::StrCat(a...)); }
template <typename... Args>
Status IOError(const Args&... a) { return Status(StatusCode::kIOError, internal::StrCat(a...)); }
template <typename... Args>
Status CorruptData(const Args&... a) { return Status(StatusCode::kCorruptData, internal::StrCat(a...)); }
template <typename... Args>
Status Unsupported(const Args&... a) { return Status(StatusCode::kUnsupported, internal::StrCat(a...)); }
template <typename... Args>
Status OutOfRange(const Args&... a) { return Status(StatusCode::kOutOfRange, internal::StrCat(a...)); }
template <typename... Args>
Status ResourceExhausted(const Args&... a) { return Status(StatusCode::kResourceExhausted, internal::StrCat(a...)); }
template <typename... Args>
Status FailedPrecondition(const Args&... a) { return Status(StatusCode::kFailedPrecondition, internal::StrCat(a...)); }
template <typename... Args>
Status Cancelled(const Args&... a) { return Status(StatusCode::kCancelled, internal::StrCat(a...)); }
template <typename... Args>
Status DeadlineExceeded(const Args&... a) { return Status(StatusCode::kDeadlineExceeded, internal::StrCat(a...)); }
template <typename... Args>
Status Internal(const Args&... a) { return Status(StatusCode::kInternal, internal::StrCat(a...)); }

// Result<T> holds either a T or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    if (status_.ok()) status_ = Status(StatusCode::kInternal, "Result built from an OK status");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  // REQUIRES: ok()
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

namespace internal {
[[noreturn]] void CheckFailed(const char* file, int line, const char* expr, const std::string& msg);
inline const Status& GetStatus(const Status& s) { return s; }
template <typename T>
const Status& GetStatus(const Result<T>& r) { return r.status(); }
}  // namespace internal

}  // namespace sluice

#define SLUICE_CONCAT_INNER_(a, b) a##b
#define SLUICE_CONCAT_(a, b) SLUICE_CONCAT_INNER_(a, b)

// Returns the status from the enclosing function if `expr` (a Status or Result) failed.
#define SLUICE_RETURN_IF_ERROR(expr)                                              \
  do {                                                                            \
    auto&& sluice_value_ = (expr); /* extends a temporary's lifetime */           \
    const ::sluice::Status& sluice_status_ = ::sluice::internal::GetStatus(sluice_value_); \
    if (!sluice_status_.ok()) return sluice_status_;                              \
  } while (0)

#define SLUICE_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()

// `SLUICE_ASSIGN_OR_RETURN(auto x, MakeX());` returns the error or binds the value.
#define SLUICE_ASSIGN_OR_RETURN(lhs, expr) \
  SLUICE_ASSIGN_OR_RETURN_IMPL_(SLUICE_CONCAT_(sluice_result_, __LINE__), lhs, expr)

// Aborts with a message when one of sluice's own invariants is broken. Never for user input.
#define SLUICE_CHECK(cond, ...)                                                        \
  do {                                                                                 \
    if (!(cond))                                                                       \
      ::sluice::internal::CheckFailed(__FILE__, __LINE__, #cond,                       \
                                      ::sluice::internal::StrCat("" __VA_OPT__(, ) __VA_ARGS__)); \
  } while (0)

#endif  // SLUICE_STATUS_H_
