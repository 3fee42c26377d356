// libcurl loaded at run time (libcurl.so.4, else the GnuTLS build libcurl-gnutls.so.4, which
// most systems with git have), so that one build runs on machines with and without it and only
// `curl/curl.h` is needed to build. Used by HttpInput for http:// and https:// shards.
//
//   SLUICE_ASSIGN_OR_RETURN(const CurlApi* curl, CurlApi::Get());
//   CURL* easy = curl->curl_easy_init();
//
// Thread-safety: CurlApi::Get() may be called from any thread (the first call also runs
// curl_global_init); the table is immutable once loaded. Easy and multi handles are used by one
// thread at a time, as libcurl requires.
#ifndef SLUICE_IO_CURL_API_H_
#define SLUICE_IO_CURL_API_H_

#include <curl/curl.h>

#include "sluice/status.h"

namespace sluice {

// The libcurl functions sluice calls, each declared and loaded from this one list.
#define SLUICE_CURL_FUNCTIONS(X) \
  X(curl_global_init)            \
  X(curl_easy_init)              \
  X(curl_easy_setopt)            \
  X(curl_easy_getinfo)           \
  X(curl_easy_cleanup)           \
  X(curl_easy_strerror)          \
  X(curl_easy_pause)             \
  X(curl_multi_init)             \
  X(curl_multi_add_handle)       \
  X(curl_multi_remove_handle)    \
  X(curl_multi_perform)          \
  X(curl_multi_poll)             \
  X(curl_multi_info_read)        \
  X(curl_multi_cleanup)          \
  X(curl_version)

struct CurlApi {
#define SLUICE_CURL_FN(name) decltype(&::name) name = nullptr;
  SLUICE_CURL_FUNCTIONS(SLUICE_CURL_FN)
#undef SLUICE_CURL_FN

  // The loaded library, or FailedPrecondition naming the files tried and what to install.
  static Result<const CurlApi*> Get();
  const char* path = "";  // the file that was loaded
};

}  // namespace sluice

#endif  // SLUICE_IO_CURL_API_H_
