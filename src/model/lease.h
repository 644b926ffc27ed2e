// A GPU's lease as values: the record a holder writes into its lock file, the state a reader
// finds, and the words every listing uses for them.  The lock files themselves (flock, the
// folder's checks) are os/lease.h; these are here so the answers and their renderers
// (answer/, output/) can carry a lease without including the OS layer.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace gpumap {

/// What a holder writes into its lock file after locking (truncated first).
struct LeaseRecord {
  int64_t pid = 0;
  int64_t uid = -1;
  std::string user;     // login name, or the uid as text
  std::string command;  // argv joined by spaces, newlines replaced
  int64_t start_unix = 0;   // for people ("since 18:02:11"); wall clock, so never used to judge liveness
  int64_t start_ticks = 0;  // the holder's start, clock ticks since boot (/proc/PID/stat field 22); 0: unknown
  int64_t job = 0;      // the job's process group once started (0: not started yet)
  bool launcher_gone = false;  // set by readers: gpumap (pid) has exited, the job still holds it
};

/// "pid=..\nuid=..\nuser=..\nstart=..\n[start_ticks=..\n][job=..\n]command=..\n"
std::string format_lease_record(const LeaseRecord& r);
/// Parses what format_lease_record wrote; nullopt for an empty or unreadable record.
std::optional<LeaseRecord> parse_lease_record(const std::string& text);

/// One line for people: "pid 123 (alice) since 18:02:11: python3 train.py"; when gpumap has
/// exited and its job holds the lease: "job 456 (alice) since ...: cmd (its gpumap has exited)".
/// `whole_command`: the command as recorded (a pipe's table cuts nothing); else its first 57 bytes and "...".
std::string describe_lease(const LeaseRecord& r, bool whole_command = false);

/// The text for a held lease without a live record.
inline constexpr const char* kUnknownHolder = "held by a process with no gpumap record";

/// A GPU's lease as a reader finds it (os/lease.h read_lease).
struct LeaseState {
  bool held = false;
  std::optional<LeaseRecord> holder;  // when held and the record is readable and live
  std::string refused;                // the lock file is unsafe (same checks as try_lease)
};

/// A lease in words, the one family every listing uses: "" when free; else "pid 123 (alice)
/// since 18:02:11: cmd" (describe_lease), kUnknownHolder while the holder has written no record,
/// or "unsafe lock file: why" when gpumap refuses the lock file.  kShort is a table cell's form:
/// "pid 123 (alice)", "held", "unsafe".  kWhole is kLine with the holder's whole command (a table
/// printed into a pipe, where nothing is cut).
enum class LeaseWords { kLine, kShort, kWhole };
std::string lease_summary(const LeaseState& state, LeaseWords words = LeaseWords::kLine);

}  // namespace gpumap
