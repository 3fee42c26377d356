#include "io/shard_stream.h"

#include <utility>
#include <vector>

#include "io/http_input.h"
#include "io/pipe_input.h"
#include "io/shard_urls.h"

namespace sluice {

namespace {

// A local file, or a local copy from the cache.
class FileStream : public ShardStream {
 public:
  explicit FileStream(const char* origin) : origin_(origin) {}
  FileInput file;
  ByteInput* input() override { return &file; }
  Status Finish() override { return Status::OK(); }
  const char* origin() const override { return origin_; }

 private:
  const char* origin_;
};

// A remote input, its bytes also written to a new cache copy when there is a writer.
class RemoteStream : public ShardStream, private ByteInput {
 public:
  RemoteStream(std::unique_ptr<ByteInput> in, std::unique_ptr<ShardDiskCache::Writer> copy)
      : in_(std::move(in)), copy_(std::move(copy)) {}
  ByteInput* input() override { return this; }
  const char* origin() const override { return "network"; }

  Status Finish() override {
    if (copy_ == nullptr) return Status::OK();
    std::vector<uint8_t> chunk(1 << 20);
    for (;;) {
      SLUICE_ASSIGN_OR_RETURN(size_t got, Read(chunk));
      if (got == 0) break;
    }
    Status st = copy_->Commit();
    copy_.reset();
    return st;
  }

 private:
  Result<size_t> Read(std::span<uint8_t> out) override {
    SLUICE_ASSIGN_OR_RETURN(size_t got, in_->Read(out));
    if (copy_ != nullptr) SLUICE_RETURN_IF_ERROR(copy_->Append(out.first(got)));
    return got;
  }
  // Skipped bytes are read all the same: the copy must hold them.
  Result<int64_t> Skip(int64_t n) override { return copy_ == nullptr ? in_->Skip(n) : SkipByReading(this, n); }

  std::unique_ptr<ByteInput> in_;
  std::unique_ptr<ShardDiskCache::Writer> copy_;
};

}  // namespace

Result<std::unique_ptr<ShardStream>> ShardStream::Open(const std::string& url, const StreamOptions& options,
                                                       ShardDiskCache* cache) {
  if (!IsStreamUrl(url)) {
    auto stream = std::make_unique<FileStream>("file");
    SLUICE_RETURN_IF_ERROR(stream->file.Open(url));
    return std::unique_ptr<ShardStream>(std::move(stream));
  }
  if (cache != nullptr) {
    if (std::optional<std::string> copy = cache->Lookup(url)) {
      auto stream = std::make_unique<FileStream>("cache");
      if (stream->file.Open(*copy).ok()) return std::unique_ptr<ShardStream>(std::move(stream));
      // evicted between the lookup and the open: read it from the network
    }
  }
  std::unique_ptr<ByteInput> in;
  if (url.starts_with("pipe:")) {
    SLUICE_ASSIGN_OR_RETURN(in, PipeInput::Open(url, options.timeout_s, options.cancel));
  } else {
    SLUICE_ASSIGN_OR_RETURN(in, HttpInput::Open(url, options));
  }
  std::unique_ptr<ShardDiskCache::Writer> copy;
  if (cache != nullptr) {
    SLUICE_ASSIGN_OR_RETURN(copy, cache->Begin(url));
  }
  return std::unique_ptr<ShardStream>(std::make_unique<RemoteStream>(std::move(in), std::move(copy)));
}

}  // namespace sluice
