// PipeInput: a "pipe:COMMAND" shard, as the webdataset library reads them: COMMAND runs under
// /bin/sh and the shard is its standard output ("pipe:aws s3 cp s3://bucket/train-0001.tar -",
// "pipe:curl -sf http://host/a.tar"). The command's standard error is kept (its last 2 KiB) for
// the error message; a command that exits with a status other than 0, or is killed by a signal,
// is an error once its output has been read to the end. Destroying the input before the end
// stops the command (its whole process group).
//
//   SLUICE_ASSIGN_OR_RETURN(auto in, PipeInput::Open("pipe:cat shard.tar", 30));
//
// Errors are IOError naming the url: the command cannot start, exits with status N (with what it
// wrote to standard error), prints nothing for `timeout_s` seconds while the reader waits.
//
// Thread-safety: one thread at a time.
#ifndef SLUICE_IO_PIPE_INPUT_H_
#define SLUICE_IO_PIPE_INPUT_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "io/tar_reader.h"

namespace sluice {

class PipeInput : public ByteInput {
 public:
  // REQUIRES: url starts with "pipe:".
  // `cancel` as StreamOptions::cancel (may be null).
  static Result<std::unique_ptr<PipeInput>> Open(const std::string& url, double timeout_s,
                                                 const std::atomic<bool>* cancel = nullptr);
  ~PipeInput() override;
  PipeInput(const PipeInput&) = delete;
  PipeInput& operator=(const PipeInput&) = delete;

  Result<size_t> Read(std::span<uint8_t> out) override;
  Result<int64_t> Skip(int64_t n) override;  // reads and drops

 private:
  PipeInput(std::string url, double timeout_s, const std::atomic<bool>* cancel)
      : url_(std::move(url)), timeout_s_(timeout_s), cancel_(cancel) {}
  // Waits until stdout has bytes or ends, keeping what stderr says. Returns whether it has bytes.
  Result<bool> Wait();
  // The command's end: OK for exit status 0, else the error with its stderr.
  Status Finish();
  void Stop();

  std::string url_;
  double timeout_s_;
  const std::atomic<bool>* cancel_;
  pid_t pid_ = -1;
  int out_fd_ = -1, err_fd_ = -1;
  std::string stderr_tail_;
  bool ended_ = false;
  Status end_status_;
  int64_t offset_ = 0;
};

}  // namespace sluice

#endif  // SLUICE_IO_PIPE_INPUT_H_
