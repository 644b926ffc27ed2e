// Running a driver call under a deadline.  A hung driver call (nvmlInit on a wedged GPU, a lost
// GPU's query, a CUDA device query of a process whose driver hangs) cannot be cancelled, so it
// runs on a thread of its own that gpumap gives up on at the deadline.
#pragma once
#include <chrono>
#include <functional>

namespace gpumap {

/// The threads that call each driver library: one per library, so a hung CUDA query never
/// delays an NVML read (and the other way round).
enum class DriverLane { kNvml, kCuda };

/// Runs `job` on `lane`'s thread, started on first use and reused, so a library that calls
/// devices() again and again against a hung driver holds one thread per lane, not one (or more)
/// per call.  One job at a time per lane: while an abandoned job still hangs, a new one waits
/// for it until its own deadline, then fails the same way.  Returns false when `job` (or an
/// earlier job still running) did not finish within `limit`.  `job` must own what it uses: an
/// abandoned one finishes, if ever, later.
///
/// Safe across fork(): a child made by fork() has no copy of the parent's threads, so the first
/// call in the child starts the child's own (the parent's state, perhaps locked mid-job by a
/// thread that no longer exists in the child, is left alone; see driver_thread.cc).
bool run_on_driver_thread(DriverLane lane, std::function<void()> job, std::chrono::duration<double> limit);

}  // namespace gpumap
