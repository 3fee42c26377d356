#include "core/file_util.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sluice {

namespace {
Status ErrnoStatus(const std::string& path, const char* what, int err) {
  if (err == ENOENT || err == ENOTDIR) return NotFound(path, ": no such file");
  return IOError(path, ": ", what, " failed: ", std::strerror(err));
}

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};


const char* FileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}
}  // namespace

Status CheckPath(const std::string& path, const char* what) {
  if (path.find('\0') == std::string::npos) return Status::OK();
  std::string shown;
  for (char c : path) shown += c == '\0' ? std::string("\\0") : std::string(1, c);
  return InvalidArgument(what, " '", shown, "' contains a NUL byte");
}

Result<int> OpenRegularFile(const std::string& path, int64_t* size) {
  // O_NONBLOCK: opening a FIFO for reading would wait for a writer (it has no effect on files).
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)};
  if (f.fd < 0) return ErrnoStatus(path, "open", errno);
  struct stat st;
  if (::fstat(f.fd, &st) != 0) return ErrnoStatus(path, "stat", errno);
  if (!S_ISREG(st.st_mode)) return Unsupported(path, ": ", FileKind(st.st_mode), ", not a regular file");
  *size = st.st_size;
  const int fd = f.fd;
  f.fd = -1;
  return fd;
}

Result<FileStamp> StampOf(int fd, const std::string& path) {
  struct stat st;
  if (fstat(fd, &st) != 0) return ErrnoStatus(path, "stat", errno);
  return FileStamp{static_cast<int64_t>(st.st_size),
                   static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

Result<SampleBytes> ReadFile(const std::string& path, const ByteAllocator& memory, int64_t max_bytes) {
  int64_t file_size = 0;
  SLUICE_ASSIGN_OR_RETURN(const int fd, OpenRegularFile(path, &file_size));
  Fd f{fd};
  if (file_size > max_bytes)
    return Unsupported(path, ": ", file_size, " bytes, over the file size limit of ", max_bytes,
                       " bytes (max_file_bytes)");
  const size_t size = static_cast<size_t>(file_size);
  SampleBytes out;
  out.owner = memory(size + 1);
  if (!out.owner) return ResourceExhausted(path, ": cannot allocate ", size, " bytes");
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(f.fd, out.owner.get() + done, size - done, static_cast<off_t>(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(path, "read", errno);
    }
    if (n == 0) break;  // file shrank while reading
    done += static_cast<size_t>(n);
  }
  out.data = out.owner.get();
  out.size = done;
  return out;
}

}  // namespace sluice
