// serve's memory under slow readers (issue 56 item 11): each reader of a 2.9 MB /metrics answer
// held a copy of it until its write timeout, and under the DaemonSet's 128Mi a few dozen slow
// readers OOM-killed serve.  The frame's series are one SharedBody that every answer holds by
// reference (only the health series after it are each answer's own), its gzip form made once;
// the shared bodies writers hold are bounded; each socket's buffers are bounded.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <malloc.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
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

std::string gunzip(const std::string& z) {
  z_stream s = {};
  EXPECT_EQ(inflateInit2(&s, 15 + 16), Z_OK);
  std::string out;
  char buf[1 << 16];
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(z.data()));
  s.avail_in = static_cast<uInt>(z.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    s.next_out = reinterpret_cast<Bytef*>(buf);
    s.avail_out = sizeof buf;
    rc = inflate(&s, Z_NO_FLUSH);
    out.append(buf, sizeof buf - s.avail_out);
  }
  EXPECT_EQ(rc, Z_STREAM_END) << "not one complete gzip member";
  EXPECT_EQ(s.avail_in, 0u) << "bytes after the gzip member";
  inflateEnd(&s);
  return out;
}

// The body of the answer `bytes` (after its head), and its Content-Length.
std::pair<std::string, size_t> split(const std::string& bytes) {
  size_t end = bytes.find("\r\n\r\n");
  size_t at = bytes.find("Content-Length: ");
  return {bytes.substr(end + 4), std::stoul(bytes.substr(at + 16))};
}

std::string some_text(size_t n, char seed) {
  std::string t;
  for (size_t i = 0; t.size() < n; ++i) t += "gpumap_process_info{pid=\"" + std::to_string(i * 7919 % 100003) + "\",c=\"" + seed + "\"} 1\n";
  t.resize(n);
  return t;
}

TEST(HttpSharedBody, GzipOfOwnAndSharedPiecesIsOneStreamOfTheWholeBody) {
  for (size_t shared_size : {size_t{0}, size_t{1}, size_t{100000}, size_t{3} << 20}) {
    for (bool own : {false, true}) {
      HttpResponse r;
      if (own) r.body = "# gpumap: before\n";
      r.shared = std::make_shared<const SharedBody>(some_text(shared_size, 'a'));
      if (own) r.tail = "gpumap_exporter_scrapes_total 42\n";
      if (!own && shared_size == 0) continue;  // (an empty answer is sent plain)
      auto [zbody, zlength] = split(format_response(r, false, true));
      EXPECT_EQ(zbody.size(), zlength) << shared_size;
      EXPECT_EQ(gunzip(zbody), r.full_body()) << shared_size << " own " << own;
      auto [body, length] = split(format_response(r, false, false));
      EXPECT_EQ(body, r.full_body());
      EXPECT_EQ(length, body.size());
      std::string head = format_response(r, true, true);
      EXPECT_EQ(head.find("\r\n\r\n") + 4, head.size()) << "HEAD: no body";
      EXPECT_NE(head.find("Content-Length: " + std::to_string(zlength) + "\r\n"), std::string::npos) << head;
    }
  }
}

TEST(HttpSharedBody, PiecesHoldTheSharedBodyByReferenceAndItsDeflateIsMadeOnce) {
  auto shared = std::make_shared<const SharedBody>(some_text(size_t{1} << 20, 'b'));
  HttpResponse r;
  r.shared = shared;
  r.tail = "tail\n";
  std::vector<WirePiece> a = response_pieces(r, false, true), b = response_pieces(r, false, true);
  const std::string& z = shared->deflated();
  auto shares = [&](const std::vector<WirePiece>& p) {
    for (const WirePiece& w : p)
      if (w.data == z.data() && w.size == z.size()) return true;
    return false;
  };
  EXPECT_TRUE(shares(a) && shares(b)) << "the deflate is the shared body's own bytes, not a copy";
  std::vector<WirePiece> plain = response_pieces(r, false, false);
  bool text = false;
  for (const WirePiece& w : plain) text |= w.data == shared->text().data();
  EXPECT_TRUE(text);
  EXPECT_GT(shared.use_count(), 3);  // held by the pieces
  a.clear();
  b.clear();
  plain.clear();
  EXPECT_EQ(shared.use_count(), 2);  // the test's and r's
  EXPECT_EQ(shared->bytes(), shared->text().capacity() + z.capacity());
}

// A connection from 127.0.0.`n` (its own address, so no per-address limit is met) with a 4 KiB
// receive window, that asks for /metrics and reads nothing.
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

// The bytes the server sends on `fd` until it closes it (at most `wait_s`).
size_t read_to_end(int fd, double wait_s) {
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  char buf[1 << 16];
  size_t total = 0;
  while (std::chrono::steady_clock::now() < until) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    ssize_t got = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (got == 0 || (got < 0 && errno != EAGAIN)) break;
    if (got > 0) total += static_cast<size_t>(got);
  }
  return total;
}

TEST(HttpServerMemory, SlowReadersOfOneFrameShareItsBytes) {
  const size_t kAnswer = size_t{3} << 20, kReaders = 40;  // 120 MiB as copies
  auto frame = std::make_shared<const SharedBody>(some_text(kAnswer, 'c'));
  HttpLimits limits;
  limits.write_timeout_s = 60;
  HttpServer server("127.0.0.1", 0, limits);
  volatile sig_atomic_t stop = 0;
  std::atomic<int> scrapes{0};
  HttpServer::Handler handler = [&](const HttpRequest&) {  // each answer its own tail, as serve's scrape counter
    HttpResponse r;
    r.shared = frame;
    r.tail = "gpumap_exporter_scrapes_total " + std::to_string(++scrapes) + "\n";
    return std::optional<HttpResponse>(r);
  };
  std::future<void> serving = std::async(std::launch::async, [&] { server.serve(handler, &stop); });
  std::vector<int> readers;
  readers.push_back(slow_reader(2, server.port()));  // the first answer made, and the process warmed
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  double before = heap_mib();
  for (size_t i = 1; i < kReaders; ++i) readers.push_back(slow_reader(static_cast<int>(i) + 2, server.port()));
  for (int i = 0; i < 100 && scrapes < static_cast<int>(kReaders); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // every answer's first bytes taken
  double grew = heap_mib() - before;
  stop = 1;
  serving.wait();
  for (int fd : readers) close(fd);
  EXPECT_EQ(scrapes, static_cast<int>(kReaders));
  EXPECT_LT(grew, 8.0) << kReaders << " slow readers of one " << (kAnswer >> 20) << " MiB frame: " << grew << " MiB more";
}

TEST(HttpServerMemory, WritersOfOlderFramesAreClosedPastThreeFramesHeld) {
  HttpLimits limits;
  limits.write_timeout_s = 60;
  HttpServer server("127.0.0.1", 0, limits);
  volatile sig_atomic_t stop = 0;
  std::atomic<int> scrapes{0};
  HttpServer::Handler handler = [&](const HttpRequest&) {  // a new frame for every answer (--cache 0)
    HttpResponse r;
    r.shared = std::make_shared<const SharedBody>(some_text(size_t{1} << 20, static_cast<char>('a' + scrapes++)));
    return std::optional<HttpResponse>(r);
  };
  std::future<void> serving = std::async(std::launch::async, [&] { server.serve(handler, &stop); });
  std::vector<int> readers;
  for (int i = 0; i < 5; ++i) {
    readers.push_back(slow_reader(i + 2, server.port()));
    for (int k = 0; k < 100 && scrapes <= i; ++k) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // Five frames asked for, three held: the readers of the two oldest were closed before their
  // answer's end, the others get all of theirs.
  const size_t kWhole = size_t{1} << 20;
  for (int i = 0; i < 5; ++i) {
    size_t got = read_to_end(readers[i], 10);
    if (i < 2) EXPECT_LT(got, kWhole) << "reader " << i << " of an older frame kept";
    else EXPECT_GT(got, kWhole) << "reader " << i << " cut";
  }
  stop = 1;
  serving.wait();
  for (int fd : readers) close(fd);
}

}  // namespace
}  // namespace gpumap
