// StreamOptions: how a shard stream (http://, https://, pipe:) is opened and when it gives up.
//
// A failure (a connection refused or dropped, an HTTP 5xx, no byte for `timeout_s` seconds while
// the reader waits) is retried, resuming at the byte reached, up to `retries` times in a row
// without progress; then the error names the url and the byte. An HTTP 4xx is final at once.
//
// Thread-safety: a plain value.
#ifndef SLUICE_IO_STREAM_OPTIONS_H_
#define SLUICE_IO_STREAM_OPTIONS_H_

#include <atomic>

namespace sluice {

struct StreamOptions {
  int retries = 3;         // attempts after a failure, counted since the last byte received
  double timeout_s = 30;   // to connect, and the longest wait for the next byte
  double backoff_s = 0.2;  // before the first retry; doubled before each next one
  // When set (and it outlives the stream), a wait for bytes ends with Cancelled within about
  // 0.1 s of it turning true.
  const std::atomic<bool>* cancel = nullptr;
};

}  // namespace sluice

#endif  // SLUICE_IO_STREAM_OPTIONS_H_
