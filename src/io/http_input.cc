#include "io/http_input.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <utility>

namespace sluice {

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

Result<std::unique_ptr<HttpInput>> HttpInput::Open(const std::string& url, const StreamOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(const CurlApi* api, CurlApi::Get());
  std::unique_ptr<HttpInput> in(new HttpInput(api, url, options));
  in->multi_ = api->curl_multi_init();
  if (in->multi_ == nullptr) return ResourceExhausted(url, ": curl_multi_init failed");
  SLUICE_RETURN_IF_ERROR(in->Fill());
  return in;
}

HttpInput::~HttpInput() {
  EndTransfer();
  if (multi_ != nullptr) api_->curl_multi_cleanup(multi_);
}

size_t HttpInput::OnData(char* data, size_t size, size_t n, void* self_ptr) {
  auto* self = static_cast<HttpInput*>(self_ptr);
  const size_t bytes = size * n;
  if (self->buf_.size() - self->head_ >= kMaxBuffered) {  // full: libcurl keeps these bytes and
    self->paused_ = true;                                  // gives them again once Fill resumes
    return CURL_WRITEFUNC_PAUSE;
  }
  if (self->first_data_) {
    self->first_data_ = false;
    long code = 0;
    self->api_->curl_easy_getinfo(self->easy_, CURLINFO_RESPONSE_CODE, &code);
    // A Range request answered with the whole body (200, not 206): drop what was read before.
    if (self->received_ > 0 && code != 206) self->drop_ = self->received_;
  }
  const size_t dropped = static_cast<size_t>(std::min<int64_t>(self->drop_, static_cast<int64_t>(bytes)));
  self->drop_ -= static_cast<int64_t>(dropped);
  if (dropped < bytes) {
    self->buf_.insert(self->buf_.end(), data + dropped, data + bytes);
    self->buffered_peak_ = std::max(self->buffered_peak_, self->buf_.size() - self->head_);
    self->received_ += static_cast<int64_t>(bytes - dropped);
    self->failures_ = 0;  // progress: the retries start again
  }
  self->last_byte_ = Clock::now();
  return bytes;
}

Status HttpInput::StartTransfer() {
  easy_ = api_->curl_easy_init();
  if (easy_ == nullptr) return ResourceExhausted(url_, ": curl_easy_init failed");
  const CurlApi& c = *api_;
  error_[0] = '\0';
  c.curl_easy_setopt(easy_, CURLOPT_URL, url_.c_str());
  c.curl_easy_setopt(easy_, CURLOPT_WRITEFUNCTION, &HttpInput::OnData);
  c.curl_easy_setopt(easy_, CURLOPT_WRITEDATA, static_cast<void*>(this));
  c.curl_easy_setopt(easy_, CURLOPT_ERRORBUFFER, error_);
  c.curl_easy_setopt(easy_, CURLOPT_FAILONERROR, 1L);
  c.curl_easy_setopt(easy_, CURLOPT_FOLLOWLOCATION, 1L);
  c.curl_easy_setopt(easy_, CURLOPT_MAXREDIRS, 5L);
  c.curl_easy_setopt(easy_, CURLOPT_NOSIGNAL, 1L);
  c.curl_easy_setopt(easy_, CURLOPT_TCP_KEEPALIVE, 1L);
  c.curl_easy_setopt(easy_, CURLOPT_BUFFERSIZE, 256L << 10);
  c.curl_easy_setopt(easy_, CURLOPT_USERAGENT, "sluice");
  c.curl_easy_setopt(easy_, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.timeout_s * 1000));
  // Certificates: the system's store, or those named as the curl tool and Python's ssl name them.
  for (const char* var : {"CURL_CA_BUNDLE", "SSL_CERT_FILE"}) {
    if (const char* file = std::getenv(var); file != nullptr && *file != '\0') {
      c.curl_easy_setopt(easy_, CURLOPT_CAINFO, file);
      break;
    }
  }
  if (const char* dir = std::getenv("SSL_CERT_DIR"); dir != nullptr && *dir != '\0')
    c.curl_easy_setopt(easy_, CURLOPT_CAPATH, dir);
  const std::string range = std::to_string(received_) + "-";
  if (received_ > 0) c.curl_easy_setopt(easy_, CURLOPT_RANGE, range.c_str());  // copied by libcurl
  first_data_ = true;
  drop_ = 0;
  ++attempts_;
  last_byte_ = Clock::now();
  if (c.curl_multi_add_handle(multi_, easy_) != CURLM_OK) {
    c.curl_easy_cleanup(easy_);
    easy_ = nullptr;
    return ResourceExhausted(url_, ": curl_multi_add_handle failed");
  }
  return Status::OK();
}

void HttpInput::EndTransfer() {
  if (easy_ == nullptr) return;
  api_->curl_multi_remove_handle(multi_, easy_);
  api_->curl_easy_cleanup(easy_);
  easy_ = nullptr;
  paused_ = false;  // a new transfer starts unpaused
}

Status HttpInput::Failed(const std::string& why, long http_code) {
  if (http_code == 404 || http_code == 410) return NotFound(url_, ": HTTP ", http_code);
  if (http_code >= 400 && http_code < 500 && http_code != 408 && http_code != 429)
    return IOError(url_, ": HTTP ", http_code);
  if (++failures_ > options_.retries) {
    const std::string what = http_code >= 400 ? "HTTP " + std::to_string(http_code)
                             : received_ > 0  ? std::string("the transfer broke off")
                                              : std::string("the transfer failed");
    return IOError(url_, ": ", what, " at byte ", received_, " after ", attempts_, " attempt(s) (", why, ")");
  }
  const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(options_.backoff_s * std::pow(2.0, failures_ - 1)));
  while (Clock::now() < until) {
    if (options_.cancel != nullptr && options_.cancel->load()) return Cancelled(url_, ": stopped");
    std::this_thread::sleep_for(std::min<Clock::duration>(until - Clock::now(), std::chrono::milliseconds(50)));
  }
  return Status::OK();
}

Status HttpInput::Fill() {
  const Clock::time_point called = Clock::now();
  while (head_ == buf_.size() && !done_) {
    if (!pending_.ok()) return pending_;
    buf_.clear();
    head_ = 0;
    if (easy_ == nullptr) SLUICE_RETURN_IF_ERROR(StartTransfer());
    if (paused_) {  // the buffer is empty again: the held bytes may come (maybe within this call)
      paused_ = false;
      api_->curl_easy_pause(easy_, CURLPAUSE_CONT);
    }
    int running = 0;
    api_->curl_multi_perform(multi_, &running);
    CURLcode result = CURLE_OK;
    bool finished = false;
    int left = 0;
    while (CURLMsg* msg = api_->curl_multi_info_read(multi_, &left)) {
      if (msg->msg == CURLMSG_DONE) {
        finished = true;
        result = msg->data.result;
      }
    }
    if (finished) {
      long code = 0;
      api_->curl_easy_getinfo(easy_, CURLINFO_RESPONSE_CODE, &code);
      const std::string why = std::string("curl: ") + (error_[0] != '\0' ? error_ : api_->curl_easy_strerror(result));
      EndTransfer();
      if (result == CURLE_OK && drop_ == 0) {
        done_ = true;
      } else if (Status st = Failed(result == CURLE_OK ? "the body ended before the byte reached" : why, code);
                 !st.ok()) {
        if (head_ == buf_.size()) return st;
        pending_ = st;  // the bytes received before the failure are read first
      }
      continue;
    }
    if (head_ < buf_.size()) break;
    if (options_.cancel != nullptr && options_.cancel->load()) return Cancelled(url_, ": stopped");
    const double idle = Seconds(Clock::now() - std::max(last_byte_, called));
    if (idle > options_.timeout_s) {
      EndTransfer();
      char waited[32];
      std::snprintf(waited, sizeof(waited), "no data for %.1f s", idle);
      SLUICE_RETURN_IF_ERROR(Failed(waited, 0));
      continue;
    }
    api_->curl_multi_poll(multi_, nullptr, 0, 100, nullptr);
  }
  return Status::OK();
}

Result<size_t> HttpInput::Read(std::span<uint8_t> out) {
  size_t got = 0;
  while (got < out.size()) {
    if (head_ == buf_.size()) {
      SLUICE_RETURN_IF_ERROR(Fill());
      if (head_ == buf_.size()) break;  // the end
    }
    const size_t n = std::min(out.size() - got, buf_.size() - head_);
    std::memcpy(out.data() + got, buf_.data() + head_, n);
    head_ += n;
    got += n;
  }
  return got;
}

Result<int64_t> HttpInput::Skip(int64_t n) {
  int64_t skipped = 0;
  while (skipped < n) {
    if (head_ == buf_.size()) {
      SLUICE_RETURN_IF_ERROR(Fill());
      if (head_ == buf_.size()) break;
    }
    const size_t k = static_cast<size_t>(std::min<int64_t>(n - skipped, static_cast<int64_t>(buf_.size() - head_)));
    head_ += k;
    skipped += static_cast<int64_t>(k);
  }
  return skipped;
}

}  // namespace sluice
