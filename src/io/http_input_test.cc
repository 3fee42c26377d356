#include "io/http_input.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace sluice {
namespace {

// Python's http.server on a free loopback port, serving `dir`, in a child process for the
// test's life. ready() is false when it could not be started (no python3).
class PythonHttpServer {
 public:
  explicit PythonHttpServer(const std::string& dir) {
    port_ = FreePort();
    if (port_ <= 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      const std::string port = std::to_string(port_);
      execlp("python3", "python3", "-m", "http.server", port.c_str(), "--bind", "127.0.0.1", "--directory",
             dir.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    for (int i = 0; i < 100 && pid_ > 0 && !Connects(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ~PythonHttpServer() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
  }
  bool ready() const { return pid_ > 0 && Connects(); }
  std::string url(const std::string& name) const { return "http://127.0.0.1:" + std::to_string(port_) + "/" + name; }

 private:
  static int FreePort() {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    int port = -1;
    if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
        getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
      port = ntohs(a.sin_port);
    close(fd);
    return port;
  }
  bool Connects() const {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port_));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
    close(fd);
    return ok;
  }
  int port_ = -1;
  pid_t pid_ = -1;
};

// A reader slower than the server: the bytes held ahead of it stay near kMaxBuffered (the
// transfer pauses) instead of growing towards the whole file, and every byte arrives in order.
TEST(HttpInputTest, ABodyFasterThanItsReaderIsHeldToABoundedBuffer) {
  if (!CurlApi::Get().ok()) GTEST_SKIP() << "no libcurl on this machine";
  const auto dir = std::filesystem::temp_directory_path() / ("sluice_http_input_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::vector<uint8_t> body(24u << 20);  // 24 MiB of a known pattern
  for (size_t i = 0; i < body.size(); ++i) body[i] = static_cast<uint8_t>((i * 2654435761u) >> 13);
  std::ofstream((dir / "big.bin").string(), std::ios::binary)
      .write(reinterpret_cast<const char*>(body.data()), static_cast<std::streamsize>(body.size()));
  PythonHttpServer server(dir.string());
  if (!server.ready()) {
    std::filesystem::remove_all(dir);
    GTEST_SKIP() << "python3 -m http.server could not be started";
  }
  auto in = HttpInput::Open(server.url("big.bin"), StreamOptions{});
  ASSERT_TRUE(in.ok()) << in.status().ToString();
  std::vector<uint8_t> got;
  std::vector<uint8_t> chunk(256u << 10);
  for (int reads = 0;; ++reads) {
    if (reads % 8 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the server runs ahead
    Result<size_t> n = (*in)->Read(chunk);
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    got.insert(got.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(*n));
    if (*n < chunk.size()) break;
  }
  EXPECT_TRUE(got == body) << "received " << got.size() << " of " << body.size() << " bytes";
  EXPECT_GT((*in)->buffered_peak(), 0u);
  // One chunk of libcurl's (CURLOPT_BUFFERSIZE, 256 KiB) may come on top of the bound.
  EXPECT_LE((*in)->buffered_peak(), HttpInput::kMaxBuffered + (256u << 10));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sluice
