#include "io/pipe_input.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

extern char** environ;

namespace sluice {

namespace {

constexpr size_t kStderrKept = 2048;

Status Errno(const std::string& url, const char* what) { return IOError(url, ": ", what, ": ", std::strerror(errno)); }

}  // namespace

Result<std::unique_ptr<PipeInput>> PipeInput::Open(const std::string& url, double timeout_s,
                                                   const std::atomic<bool>* cancel) {
  std::unique_ptr<PipeInput> in(new PipeInput(url, timeout_s, cancel));
  const std::string command = url.substr(5);
  if (command.find_first_not_of(" \t") == std::string::npos) return InvalidArgument(url, ": no command after 'pipe:'");
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) return Errno(url, "pipe");
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    return Errno(url, "pipe");
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);  // its own group: Stop() ends all of it
  posix_spawnattr_setpgroup(&attr, 0);
  std::vector<char*> argv = {const_cast<char*>("sh"), const_cast<char*>("-c"), const_cast<char*>(command.c_str()),
                             nullptr};
  const int rc = posix_spawn(&in->pid_, "/bin/sh", &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(out[1]);
  close(err[1]);
  in->out_fd_ = out[0];
  in->err_fd_ = err[0];
  if (rc != 0) {
    in->pid_ = -1;
    return IOError(url, ": cannot start /bin/sh: ", std::strerror(rc));
  }
  return in;
}

PipeInput::~PipeInput() { Stop(); }

void PipeInput::Stop() {
  if (out_fd_ >= 0) close(out_fd_);
  if (err_fd_ >= 0) close(err_fd_);
  out_fd_ = err_fd_ = -1;
  if (pid_ > 0) {
    kill(-pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
}

Result<bool> PipeInput::Wait() {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
    const int n = poll(fds, err_fd_ >= 0 ? 2 : 1, 200);
    if (n < 0 && errno != EINTR) return Errno(url_, "poll");
    if (n > 0 && err_fd_ >= 0 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      char chunk[1024];
      const ssize_t got = read(err_fd_, chunk, sizeof(chunk));
      if (got > 0) {
        stderr_tail_.append(chunk, static_cast<size_t>(got));
        if (stderr_tail_.size() > kStderrKept) stderr_tail_.erase(0, stderr_tail_.size() - kStderrKept);
      } else if (got == 0) {
        close(err_fd_);
        err_fd_ = -1;
      }
    }
    if (n > 0 && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) return true;
    if (cancel_ != nullptr && cancel_->load()) return Cancelled(url_, ": stopped");
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited > timeout_s_) {
      Stop();
      return IOError(url_, ": the command wrote nothing for ", static_cast<int>(waited), " s (at byte ", offset_, ")");
    }
  }
}

Status PipeInput::Finish() {
  // Standard error to its end (the command has closed stdout; it may still be writing stderr).
  while (err_fd_ >= 0) {
    char chunk[1024];
    const ssize_t got = read(err_fd_, chunk, sizeof(chunk));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    stderr_tail_.append(chunk, static_cast<size_t>(got));
    if (stderr_tail_.size() > kStderrKept) stderr_tail_.erase(0, stderr_tail_.size() - kStderrKept);
  }
  int status = 0;
  pid_t r;
  do r = waitpid(pid_, &status, 0);
  while (r < 0 && errno == EINTR);
  pid_ = -1;
  while (!stderr_tail_.empty() && (stderr_tail_.back() == '\n' || stderr_tail_.back() == ' ')) stderr_tail_.pop_back();
  const std::string said = stderr_tail_.empty() ? "" : ": " + stderr_tail_;
  if (r < 0) return Errno(url_, "waitpid");
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::OK();
  if (WIFSIGNALED(status))
    return IOError(url_, ": the command was killed by signal ", WTERMSIG(status), " after ", offset_, " bytes", said);
  return IOError(url_, ": the command exited with status ", WEXITSTATUS(status), " after ", offset_, " bytes", said);
}

Result<size_t> PipeInput::Read(std::span<uint8_t> out) {
  size_t got = 0;
  while (got < out.size() && !ended_) {
    if (out_fd_ < 0) return FailedPrecondition(url_, ": read after the input was stopped");
    SLUICE_ASSIGN_OR_RETURN(bool ready, Wait());
    if (!ready) continue;
    const ssize_t n = read(out_fd_, out.data() + got, out.size() - got);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return Errno(url_, "read");
    }
    if (n == 0) {
      ended_ = true;
      end_status_ = Finish();
      break;
    }
    got += static_cast<size_t>(n);
    offset_ += n;
  }
  if (ended_ && !end_status_.ok()) return end_status_;
  return got;
}

Result<int64_t> PipeInput::Skip(int64_t n) { return SkipByReading(this, n); }

}  // namespace sluice
