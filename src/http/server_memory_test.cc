// serve's memory under slow readers (issue 56 item 11): each reader of a 2.9 MB /metrics answer
// held a copy of it until its write timeout, and under the DaemonSet's 128Mi a few dozen slow
// readers OOM-killed serve.  The same answer is one buffer shared by its readers.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <malloc.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "http/server.h"

#if defined(__SANITIZE_ADDRESS__)
extern "C" size_t __sanitizer_get_current_allocated_bytes();  // libasan's (sanitizer/allocator_interface.h)
#endif

namespace gpumap {
namespace {

// The heap this process holds now, in MiB: what is allocated and not freed (ASan's count in the
// sanitizer build, whose freed memory waits in a quarantine; glibc's otherwise).
double heap_mib() {
#if defined(__SANITIZE_ADDRESS__)
  return static_cast<double>(__sanitizer_get_current_allocated_bytes()) / (1 << 20);
#else
  return static_cast<double>(mallinfo2().uordblks) / (1 << 20);
#endif
}

// A connection from 127.0.0.`n` (its own address, so no per-address limit is met) with a 4 KiB
// receive window, that asks for /metrics and never reads.
int slow_reader(int n, uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int small = 4096;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  sockaddr_in src = {};
  src.sin_family = AF_INET;
  src.sin_addr.s_addr = htonl(0x7f000000u | static_cast<uint32_t>(n));
  sockaddr_in a = {};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof src), 0);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  std::string req = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
  EXPECT_EQ(send(fd, req.data(), req.size(), MSG_NOSIGNAL), static_cast<ssize_t>(req.size()));
  return fd;
}

TEST(HttpServerMemory, SlowReadersOfOneAnswerShareItsBytes) {
  const size_t kAnswer = size_t{3} << 20, kReaders = 40;  // 120 MiB as copies
  std::string body(kAnswer, '#');
  for (size_t i = 0; i < body.size(); i += 97) body[i] = '\n';
  HttpLimits limits;
  limits.write_timeout_s = 60;
  HttpServer server("127.0.0.1", 0, limits);
  volatile sig_atomic_t stop = 0;
  HttpServer::Handler handler = [&](const HttpRequest&) {
    return std::optional<HttpResponse>(HttpResponse{200, "text/plain; version=0.0.4", body, {}});
  };
  std::future<void> serving = std::async(std::launch::async, [&] { server.serve(handler, &stop); });
  std::vector<int> readers;
  readers.push_back(slow_reader(2, server.port()));  // the first answer made: its buffer, and the process warmed
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  double before = heap_mib();
  for (size_t i = 1; i < kReaders; ++i) readers.push_back(slow_reader(static_cast<int>(i) + 2, server.port()));
  std::this_thread::sleep_for(std::chrono::seconds(2));  // every answer made, its first bytes taken
  double grew = heap_mib() - before;
  stop = 1;
  serving.wait();
  for (int fd : readers) close(fd);
  EXPECT_LT(grew, 40.0) << kReaders << " slow readers of one " << (kAnswer >> 20) << " MiB answer: " << grew << " MiB more";
}

}  // namespace
}  // namespace gpumap
