// Sleeping that a caller can cut short: the self-pipe idiom.  A library call that waits (pin's
// `wait`) is given a descriptor that becomes readable when the caller wants it to stop, such as
// the pipe that Python's signal.set_wakeup_fd writes each signal's number to.
#pragma once

namespace gpumap {

/// Sleeps `timeout_ms` milliseconds; returns true early as soon as `fd` is readable (data, end of
/// file, an error or a hang-up: anything but "nothing yet").  A negative `fd` just sleeps.  Reads
/// nothing from `fd`, so the caller still sees what arrived.
bool wait_for_input(int fd, int timeout_ms);

}  // namespace gpumap
