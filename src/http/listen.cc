#include "http/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "model/error.h"

namespace gpumap {

std::pair<std::string, uint16_t> parse_listen_address(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return Error(kExitUsage, "--listen " + text + ": " + why,
                 "give HOST:PORT, e.g. --listen 127.0.0.1:9467 (loopback), --listen 0.0.0.0:9467 (every IPv4 address), "
                 "--listen [::1]:9467");
  };
  size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) throw bad("no HOST:PORT");
  std::string host = text.substr(0, colon), port = text.substr(colon + 1);
  if (host.front() == '[') {
    if (host.back() != ']') throw bad("an IPv6 address goes in brackets");
    host = host.substr(1, host.size() - 2);
    in6_addr a6;
    if (inet_pton(AF_INET6, host.c_str(), &a6) != 1) throw bad("`" + host + "` is not an IPv6 address");
  } else if (host != "localhost") {
    in_addr a4;
    if (inet_pton(AF_INET, host.c_str(), &a4) != 1) throw bad("`" + host + "` is not an IPv4 address (or localhost, or [IPv6])");
  }
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos || std::stoul(port) > 65535)
    throw bad("the port must be a number from 0 to 65535");
  return {host, static_cast<uint16_t>(std::stoul(port))};
}

bool is_loopback_host(const std::string& host) {
  if (host == "localhost" || host == "::1") return true;
  std::string v4 = host;
  if (v4.size() > 7 && strncasecmp(v4.c_str(), "::ffff:", 7) == 0) v4 = v4.substr(7);  // IPv4-mapped
  in_addr a4;
  return inet_pton(AF_INET, v4.c_str(), &a4) == 1 && (ntohl(a4.s_addr) >> 24) == 127;
}

std::optional<int> activation_socket(const std::optional<std::string>& listen_pid,
                                     const std::optional<std::string>& listen_fds) {
  if (!listen_pid || !listen_fds) return std::nullopt;
  if (*listen_pid != std::to_string(getpid())) return std::nullopt;  // meant for another process
  auto bad = [](const std::string& why) {
    return Error(kExitUsage, "socket activation: " + why,
                 "give gpumap serve one ListenStream= socket (contrib/systemd/gpumap-serve.socket), or start it "
                 "without LISTEN_FDS/LISTEN_PID");
  };
  if (*listen_fds != "1") throw bad("LISTEN_FDS=" + *listen_fds + ": gpumap serve takes exactly one socket");
  const int fd = 3;  // SD_LISTEN_FDS_START
  int accepting = 0, type = 0;
  socklen_t len = sizeof accepting;
  if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &len) != 0)
    throw bad(std::string("descriptor 3 is not a socket: ") + std::strerror(errno));
  len = sizeof type;
  getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len);
  sockaddr_storage ss = {};
  len = sizeof ss;
  getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  if (!accepting || type != SOCK_STREAM || (ss.ss_family != AF_INET && ss.ss_family != AF_INET6))
    throw bad("descriptor 3 is not a listening TCP socket");
  fcntl(fd, F_SETFD, FD_CLOEXEC);  // the probe children never inherit it
  return fd;
}

}  // namespace gpumap
