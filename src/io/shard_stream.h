// ShardStream: a shard's bytes from its start, as a walk reads them: a local path (read from
// the file), "pipe:COMMAND" (PipeInput) or http(s):// (HttpInput). With a ShardDiskCache, a
// remote shard comes from its local copy when the cache has one; otherwise the bytes read are
// also written to a new copy, published by Finish() once the stream has ended cleanly.
//
//   SLUICE_ASSIGN_OR_RETURN(auto stream, ShardStream::Open(url, options, cache.get()));
//   TarReader tar(stream->input(), url);
//   ... walk ...
//   SLUICE_RETURN_IF_ERROR(stream->Finish());   // reads what the walk left, for the cache
//
// Thread-safety: one thread at a time.
#ifndef SLUICE_IO_SHARD_STREAM_H_
#define SLUICE_IO_SHARD_STREAM_H_

#include <memory>
#include <string>

#include "io/shard_disk_cache.h"
#include "io/stream_options.h"
#include "io/tar_reader.h"

namespace sluice {

class ShardStream {
 public:
  // `cache` may be null; it is used for remote shards only and must outlive the stream. Errors:
  // those of the input (NotFound, IOError naming the url), IOError when the cache cannot be
  // written.
  static Result<std::unique_ptr<ShardStream>> Open(const std::string& url, const StreamOptions& options,
                                                   ShardDiskCache* cache);
  virtual ~ShardStream() = default;

  virtual ByteInput* input() = 0;
  // The end of a walk that read what it needed: with a copy being written, reads the rest of
  // the stream into it and publishes it (errors as the input's); otherwise nothing.
  virtual Status Finish() = 0;
  // Where the bytes come from: "file", "cache" (a local copy), "network" (http, pipe).
  virtual const char* origin() const = 0;
};

}  // namespace sluice

#endif  // SLUICE_IO_SHARD_STREAM_H_
