// TarReader: the members of a tar archive (POSIX ustar with GNU and pax extensions, as GNU tar,
// Python's tarfile and the webdataset library write them), walked start to end from a ByteInput
// that is never asked to go back: a local shard (pread), a download or a pipe (read).
//
//   FileInput in;  SLUICE_RETURN_IF_ERROR(in.Open("train-0000.tar"));
//   TarReader tar(&in, "train-0000.tar");
//   for (;;) {
//     SLUICE_ASSIGN_OR_RETURN(std::optional<TarMember> m, tar.Next());
//     if (!m) break;                                    // end of the archive
//     if (wanted(*m)) SLUICE_RETURN_IF_ERROR(tar.ReadData(buffer));  // else Next() skips it
//   }
//
// Only regular files are returned; directories, links, devices and pax global headers are
// passed over. Errors are CorruptData naming the archive and the byte offset: a header whose
// checksum is wrong (the first one: "not a tar archive"), a size field that is not a number, a
// member or header cut short by the end of the input, an empty input.
//
// Thread-safety: a TarReader and its input are used by one thread at a time.
#ifndef SLUICE_IO_TAR_READER_H_
#define SLUICE_IO_TAR_READER_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "core/file_util.h"
#include "sluice/status.h"

namespace sluice {

// Bytes read in order. Read fills `out` as far as it can: fewer bytes only at the end.
class ByteInput {
 public:
  virtual ~ByteInput() = default;
  virtual Result<size_t> Read(std::span<uint8_t> out) = 0;
  // Passes over `n` bytes; returns how many there were before the end.
  virtual Result<int64_t> Skip(int64_t n) = 0;
};

// Skip for an input that cannot seek (a pipe, a download that is also being copied): reads `n`
// bytes (or up to the end) through a scratch buffer and drops them. Returns how many there were.
Result<int64_t> SkipByReading(ByteInput* input, int64_t n);

// A local file read with pread from a moving offset; Skip only moves it.
class FileInput : public ByteInput {
 public:
  FileInput() = default;
  ~FileInput() override;
  FileInput(const FileInput&) = delete;
  FileInput& operator=(const FileInput&) = delete;
  // NotFound / IOError naming the path; Unsupported for what is not a regular file.
  Status Open(const std::string& path);
  Result<size_t> Read(std::span<uint8_t> out) override;
  Result<int64_t> Skip(int64_t n) override;
  int64_t size() const { return size_; }
  Result<FileStamp> Stamp() const { return StampOf(fd_, path_); }

 private:
  std::string path_;
  int fd_ = -1;
  int64_t size_ = 0;
  int64_t offset_ = 0;
};

struct TarMember {
  std::string name;         // full path inside the archive (pax or GNU long names included)
  int64_t size = 0;         // bytes of data
  int64_t data_offset = 0;  // where its data starts in the archive
};

class TarReader {
 public:
  // `what` names the archive in errors. REQUIRES: `input` outlives the reader.
  TarReader(ByteInput* input, std::string what) : in_(input), what_(std::move(what)) {}

  // The next regular file, or nullopt at the end (the end-of-archive block, or the input ending
  // exactly between members). Skips the data of the previous member if it was not read.
  Result<std::optional<TarMember>> Next();
  // The data of the member Next() returned. REQUIRES: out.size() == that member's size; once.
  Status ReadData(std::span<uint8_t> out);

 private:
  // Exactly out.size() bytes, else CorruptData naming `needed_for`.
  Status ReadExactly(std::span<uint8_t> out, const std::string& needed_for);
  Status SkipExactly(int64_t n, const std::string& member);
  // A pax extended header's records into `pax_path_` / `pax_size_`.
  Status ParsePax(std::span<const uint8_t> records, int64_t at);

  ByteInput* in_;
  std::string what_;
  int64_t offset_ = 0;       // bytes consumed from the input
  int64_t pending_ = 0;      // data of the last member still to skip
  int64_t pad_ = 0;          // and its padding to the next block
  std::string pending_name_;
  int64_t unread_ = -1;      // the last member's size while its data may still be read
  std::optional<std::string> long_name_;  // from a GNU 'L' or pax 'path' record, for the next member
  std::optional<int64_t> pax_size_;
  bool started_ = false;
};

}  // namespace sluice

#endif  // SLUICE_IO_TAR_READER_H_
