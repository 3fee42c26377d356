#include "io/tar_reader.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <vector>

#include "core/file_util.h"

namespace sluice {

Result<int64_t> SkipByReading(ByteInput* input, int64_t n) {
  std::vector<uint8_t> scratch(static_cast<size_t>(std::clamp<int64_t>(n, 0, 1 << 20)));
  int64_t done = 0;
  while (done < n) {
    const size_t want = static_cast<size_t>(std::min<int64_t>(n - done, static_cast<int64_t>(scratch.size())));
    SLUICE_ASSIGN_OR_RETURN(size_t got, input->Read(std::span<uint8_t>(scratch.data(), want)));
    done += static_cast<int64_t>(got);
    if (got < want) break;
  }
  return done;
}

namespace {
constexpr int64_t kBlock = 512;
constexpr int64_t kMaxExtendedHeader = 1 << 20;  // pax records or a GNU long name
constexpr int64_t kMaxMember = int64_t{1} << 50;  // larger sizes are damage (and would overflow)

int64_t Padded(int64_t n) { return (n + kBlock - 1) / kBlock * kBlock; }

// A numeric header field: octal digits (spaces and NULs around them), or GNU base-256 when the
// first byte has its high bit set. nullopt when it is neither.
std::optional<int64_t> Number(const uint8_t* f, size_t n) {
  if (f[0] & 0x80) {
    if (f[0] & 0x40) return std::nullopt;  // negative
    int64_t v = f[0] & 0x3f;
    for (size_t i = 1; i < n; ++i) {
      if (v > (INT64_MAX >> 8)) return std::nullopt;
      v = (v << 8) | f[i];
    }
    return v;
  }
  size_t i = 0;
  while (i < n && (f[i] == ' ' || f[i] == 0)) ++i;
  int64_t v = 0;
  for (; i < n && f[i] >= '0' && f[i] <= '7'; ++i) {
    if (v > (INT64_MAX >> 3)) return std::nullopt;
    v = v * 8 + (f[i] - '0');
  }
  for (; i < n; ++i)
    if (f[i] != ' ' && f[i] != 0) return std::nullopt;
  return v;
}

bool ChecksumOk(const uint8_t* h) {
  const std::optional<int64_t> want = Number(h + 148, 8);
  if (!want) return false;
  int64_t sum = 0, signed_sum = 0;
  for (int64_t i = 0; i < kBlock; ++i) {
    const uint8_t b = (i >= 148 && i < 156) ? ' ' : h[i];
    sum += b;
    signed_sum += static_cast<int8_t>(b);
  }
  return *want == sum || *want == signed_sum;
}

std::string Field(const uint8_t* f, size_t n) {
  const auto* c = reinterpret_cast<const char*>(f);
  return std::string(c, strnlen(c, n));
}
}  // namespace

// ---------------------------------------------------------------------------- FileInput

FileInput::~FileInput() {
  if (fd_ >= 0) close(fd_);
}

Status FileInput::Open(const std::string& path) {
  path_ = path;
  SLUICE_ASSIGN_OR_RETURN(fd_, OpenRegularFile(path, &size_));
  return Status::OK();
}

Result<size_t> FileInput::Read(std::span<uint8_t> out) {
  size_t got = 0;
  while (got < out.size()) {
    const ssize_t r = pread(fd_, out.data() + got, out.size() - got, offset_);
    if (r < 0) {
      if (errno == EINTR) continue;
      return IOError(path_, ": read at byte ", offset_, ": ", std::strerror(errno));
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
    offset_ += r;
  }
  return got;
}

Result<int64_t> FileInput::Skip(int64_t n) {
  const int64_t step = std::min(n, std::max<int64_t>(0, size_ - offset_));
  offset_ += step;
  return step;
}

// ---------------------------------------------------------------------------- TarReader

Status TarReader::ReadExactly(std::span<uint8_t> out, const std::string& needed_for) {
  SLUICE_ASSIGN_OR_RETURN(const size_t got, in_->Read(out));
  offset_ += static_cast<int64_t>(got);
  if (got < out.size())
    return CorruptData(what_, ": truncated at byte ", offset_, " (", needed_for, " needs ", out.size() - got,
                       " more bytes)");
  return Status::OK();
}

Status TarReader::SkipExactly(int64_t n, const std::string& member) {
  SLUICE_ASSIGN_OR_RETURN(const int64_t got, in_->Skip(n));
  offset_ += got;
  if (got < n)
    return CorruptData(what_, ": truncated at byte ", offset_, " (member '", member, "' needs ", n - got,
                       " more bytes)");
  return Status::OK();
}

Status TarReader::ParsePax(std::span<const uint8_t> records, int64_t at) {
  // Records: "<length> <key>=<value>\n", the length counting the whole record.
  std::string_view rest(reinterpret_cast<const char*>(records.data()), records.size());
  while (!rest.empty() && rest.front() != '\0') {
    const size_t space = rest.find(' ');
    size_t len = 0;
    for (size_t i = 0; i < space && i < rest.size(); ++i) {
      if (rest[i] < '0' || rest[i] > '9') return CorruptData(what_, ": bad pax header at byte ", at);
      len = len * 10 + static_cast<size_t>(rest[i] - '0');
      if (len > rest.size()) return CorruptData(what_, ": bad pax header at byte ", at);
    }
    if (space == std::string_view::npos || len <= space + 1 || len > rest.size() || rest[len - 1] != '\n')
      return CorruptData(what_, ": bad pax header at byte ", at);
    const std::string_view record = rest.substr(space + 1, len - space - 2);
    const size_t eq = record.find('=');
    if (eq != std::string_view::npos) {
      const std::string_view key = record.substr(0, eq), value = record.substr(eq + 1);
      if (key == "path") long_name_ = std::string(value);
      if (key == "size") {
        int64_t v = 0;
        for (char c : value) {
          if (c < '0' || c > '9' || v > INT64_MAX / 10 - 9) return CorruptData(what_, ": bad pax size at byte ", at);
          v = v * 10 + (c - '0');
        }
        pax_size_ = v;
      }
    }
    rest.remove_prefix(len);
  }
  return Status::OK();
}

Result<std::optional<TarMember>> TarReader::Next() {
  if (pending_ > 0) {
    SLUICE_RETURN_IF_ERROR(SkipExactly(pending_, pending_name_));
    pending_ = 0;
  }
  if (pad_ > 0) {  // a missing last padding is no loss: the input may end here
    SLUICE_ASSIGN_OR_RETURN(const int64_t got, in_->Skip(pad_));
    offset_ += got;
    pad_ = 0;
  }
  unread_ = -1;
  std::array<uint8_t, kBlock> h;
  for (;;) {
    const int64_t at = offset_;
    SLUICE_ASSIGN_OR_RETURN(const size_t got, in_->Read(h));
    offset_ += static_cast<int64_t>(got);
    if (got == 0) {
      if (!started_) return CorruptData(what_, ": empty, not a tar archive");
      return std::optional<TarMember>();
    }
    if (got < h.size()) return CorruptData(what_, ": truncated at byte ", offset_, " (inside a header)");
    if (std::all_of(h.begin(), h.end(), [](uint8_t b) { return b == 0; })) {
      started_ = true;
      return std::optional<TarMember>();  // the end-of-archive block
    }
    if (!ChecksumOk(h.data())) {
      if (!started_) return CorruptData(what_, ": not a tar archive (no valid header at byte 0)");
      return CorruptData(what_, ": corrupt header at byte ", at, " (checksum mismatch)");
    }
    started_ = true;
    std::optional<int64_t> size = Number(h.data() + 124, 12);
    if (!size) return CorruptData(what_, ": corrupt header at byte ", at, " (size is not a number)");
    if (pax_size_) size = *pax_size_;
    pax_size_.reset();
    if (*size > kMaxMember) return CorruptData(what_, ": corrupt header at byte ", at, " (size ", *size, ")");
    std::string name;
    if (long_name_) {
      name = std::move(*long_name_);
      long_name_.reset();
    } else {
      name = Field(h.data(), 100);
      const bool posix = std::memcmp(h.data() + 257, "ustar\0", 6) == 0;
      const std::string prefix = posix ? Field(h.data() + 345, 155) : std::string();
      if (!prefix.empty()) name = prefix + "/" + name;
    }
    const char type = static_cast<char>(h[156]);
    if (type == 'x' || type == 'L') {  // pax per-file records, or a GNU long name, for the next member
      if (*size > kMaxExtendedHeader)
        return CorruptData(what_, ": extended header of ", *size, " bytes at byte ", at);
      std::vector<uint8_t> data(static_cast<size_t>(*size));
      SLUICE_RETURN_IF_ERROR(ReadExactly(data, "an extended header"));
      SLUICE_RETURN_IF_ERROR(SkipExactly(Padded(*size) - *size, "(extended header)"));
      if (type == 'x') {
        SLUICE_RETURN_IF_ERROR(ParsePax(data, at));
      } else {
        long_name_ = Field(data.data(), data.size());
      }
      continue;
    }
    if (type == '0' || type == '\0' || type == '7') {
      pending_ = *size;
      pad_ = Padded(*size) - *size;
      pending_name_ = name;
      unread_ = *size;
      return std::optional<TarMember>(TarMember{std::move(name), *size, offset_});
    }
    // Anything else (directories, links, devices, FIFOs, pax global headers, GNU volume
    // labels): its data, if any, is passed over.
    SLUICE_RETURN_IF_ERROR(SkipExactly(Padded(*size), name));
  }
}

Status TarReader::ReadData(std::span<uint8_t> out) {
  if (unread_ < 0 || static_cast<int64_t>(out.size()) != unread_)
    return Internal("TarReader::ReadData: ", out.size(), " bytes asked, the member has ", unread_);
  SLUICE_RETURN_IF_ERROR(ReadExactly(out, "member '" + pending_name_ + "'"));
  pending_ = 0;
  unread_ = -1;
  return Status::OK();
}

}  // namespace sluice
