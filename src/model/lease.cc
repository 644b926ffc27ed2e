#include "model/lease.h"

#include <time.h>

#include <ctime>
#include <exception>

#include "model/text.h"

namespace gpumap {

std::string format_lease_record(const LeaseRecord& r) {
  std::string cmd = r.command;
  for (char& c : cmd)
    if (c == '\n' || c == '\r') c = ' ';
  return "pid=" + std::to_string(r.pid) + "\nuid=" + std::to_string(r.uid) + "\nuser=" + r.user +
         "\nstart=" + std::to_string(r.start_unix) + "\n" +
         (r.start_ticks > 0 ? "start_ticks=" + std::to_string(r.start_ticks) + "\n" : "") +
         (r.job > 0 ? "job=" + std::to_string(r.job) + "\n" : "") +
         "command=" + cmd + "\n";
}

std::optional<LeaseRecord> parse_lease_record(const std::string& text) {
  LeaseRecord r;
  bool have_pid = false;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string k = line.substr(0, eq), v = line.substr(eq + 1);
    try {
      if (k == "pid") r.pid = std::stoll(v), have_pid = true;
      else if (k == "uid") r.uid = std::stoll(v);
      else if (k == "user") r.user = v;
      else if (k == "start") r.start_unix = std::stoll(v);
      else if (k == "start_ticks") r.start_ticks = std::stoll(v);
      else if (k == "job") r.job = std::stoll(v);
      else if (k == "command") r.command = v;
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  if (!have_pid) return std::nullopt;
  return r;
}

std::string describe_lease(const LeaseRecord& r, bool whole_command) {
  // Records are written by other users: printable() keeps their bytes off the reader's terminal.
  std::string s = (r.launcher_gone ? "job " + std::to_string(r.job) : "pid " + std::to_string(r.pid)) + " (" +
                  (r.user.empty() ? "?" : printable(r.user)) + ")";
  if (r.start_unix > 0) {
    time_t t = static_cast<time_t>(r.start_unix);
    struct tm tm;
    char buf[32];
    if (localtime_r(&t, &tm) && strftime(buf, sizeof buf, "%H:%M:%S", &tm)) s += std::string(" since ") + buf;
  }
  if (!r.command.empty()) {
    // Appended piece by piece: g++ 12 -O2 warns (-Warray-bounds, a false positive) on a + temporary chain here.
    s += ": ";
    bool cut = !whole_command && r.command.size() > 60;
    s += printable(r.command.substr(0, cut ? 57 : r.command.size()));
    if (cut) s += "...";
  }
  if (r.launcher_gone) s += " (its gpumap has exited)";
  return s;
}

std::string lease_summary(const LeaseState& st, LeaseWords words) {
  const bool brief = words == LeaseWords::kShort;
  if (!st.refused.empty()) return brief ? "unsafe" : "unsafe lock file: " + st.refused;
  if (!st.held) return "";
  if (!st.holder) return brief ? "held" : kUnknownHolder;
  if (!brief) return describe_lease(*st.holder, words == LeaseWords::kWhole);
  return "pid " + std::to_string(st.holder->pid) + " (" + (st.holder->user.empty() ? "?" : printable(st.holder->user)) + ")";
}

}  // namespace gpumap
