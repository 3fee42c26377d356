// HttpInput: an http:// or https:// shard read start to end through libcurl (curl_api.h), as a
// ByteInput for TarReader. Bytes are fetched as Read asks for them (nothing runs between reads,
// so a consumer that pauses holds no thread), and at most about kMaxBuffered bytes are held
// ahead of the reader: past that the transfer pauses until the reader has taken them (a fast
// server once filled the buffer with half a shard at a time). A failed transfer is retried from
// the byte reached with a Range request (a server that ignores it sends the whole body again,
// and the bytes already read are dropped), as StreamOptions says.
//
// https:// checks the server's certificate against the system's store, or the file named by
// CURL_CA_BUNDLE or SSL_CERT_FILE (and the folder SSL_CERT_DIR), as the curl tool does.
//
//   SLUICE_ASSIGN_OR_RETURN(auto in, HttpInput::Open("http://host/train-0000.tar", {}));
//   TarReader tar(in.get(), in->url());
//
// Errors name the url: NotFound for HTTP 404 / 410, IOError for another HTTP error or a
// transfer that failed `retries` + 1 times with no byte received between the failures ("...:
// the transfer broke off at byte 123456 after 4 attempt(s) (curl: ...)"), FailedPrecondition
// when libcurl cannot be loaded.
//
// Thread-safety: one thread at a time.
#ifndef SLUICE_IO_HTTP_INPUT_H_
#define SLUICE_IO_HTTP_INPUT_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "io/curl_api.h"
#include "io/stream_options.h"
#include "io/tar_reader.h"

namespace sluice {

class HttpInput : public ByteInput {
 public:
  // Starts the transfer and waits for its first bytes (or its end), so that a missing shard or
  // a server that is down fails here.
  static Result<std::unique_ptr<HttpInput>> Open(const std::string& url, const StreamOptions& options);
  ~HttpInput() override;
  HttpInput(const HttpInput&) = delete;
  HttpInput& operator=(const HttpInput&) = delete;

  Result<size_t> Read(std::span<uint8_t> out) override;
  Result<int64_t> Skip(int64_t n) override;  // reads and drops: a stream does not seek

  // The bytes received ahead of the reader before the transfer pauses (one more chunk of
  // libcurl's may come on top).
  static constexpr size_t kMaxBuffered = size_t{1} << 20;

  const std::string& url() const { return url_; }
  size_t buffered_peak() const { return buffered_peak_; }  // the most bytes ever held ahead
  int64_t received() const { return received_; }  // body bytes received so far
  int attempts() const { return attempts_; }      // transfers started

 private:
  HttpInput(const CurlApi* api, std::string url, const StreamOptions& options)
      : api_(api), url_(std::move(url)), options_(options) {}
  static size_t OnData(char* data, size_t size, size_t n, void* self);
  Status StartTransfer();
  void EndTransfer();
  // Runs the transfer until bytes are buffered or it ends; retries failures as StreamOptions says.
  Status Fill();
  // A failed transfer: Ok to retry (after the backoff), or the final error.
  Status Failed(const std::string& why, long http_code);

  const CurlApi* api_;
  std::string url_;
  StreamOptions options_;
  CURLM* multi_ = nullptr;
  CURL* easy_ = nullptr;
  std::vector<uint8_t> buf_;  // received, not yet read; read from head_
  size_t head_ = 0;
  int64_t received_ = 0;      // body bytes kept (buffered or read)
  int64_t drop_ = 0;          // bytes to drop from this transfer (a Range request answered whole)
  bool first_data_ = true;    // the transfer's first bytes are yet to come
  bool done_ = false;         // the body ended cleanly
  bool paused_ = false;       // OnData paused the transfer: the buffer was full
  size_t buffered_peak_ = 0;  // the most bytes held ahead of the reader
  int failures_ = 0;          // in a row, without a byte between them
  Status pending_;            // the final failure, returned once the bytes before it are read
  int attempts_ = 0;
  std::chrono::steady_clock::time_point last_byte_;
  char error_[CURL_ERROR_SIZE] = {};
};

}  // namespace sluice

#endif  // SLUICE_IO_HTTP_INPUT_H_
