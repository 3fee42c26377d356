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
}  // namespace

Result<SampleBytes> ReadFile(const std::string& path, const ByteAllocator& memory) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) return ErrnoStatus(path, "open", errno);
  struct stat st;
  if (::fstat(f.fd, &st) != 0) return ErrnoStatus(path, "stat", errno);
  if (S_ISDIR(st.st_mode)) return IOError(path, ": is a directory, not a file");
  const size_t size = static_cast<size_t>(st.st_size);
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
