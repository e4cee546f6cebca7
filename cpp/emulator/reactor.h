// The gate's reactor: readiness only. An epoll set of descriptors the gate watches (the listening
// socket, idle connections for input, connections being drained for output) and one wake-up
// descriptor that any thread may signal. It knows nothing of HTTP, connections or workers: the
// gate (gate.cpp) reads what is ready and decides.
//
// Invariants:
// - A descriptor is in the set for one kind of readiness at a time: input (watch: EPOLLIN |
//   EPOLLRDHUP) or output (watch_output: EPOLLOUT only, so a half-closed peer does not wake the
//   loop again and again while its answer drains); a connection with a worker is in neither.
// - Level-triggered: what is not read or written at one wait is reported again at the next.
// - The wake-up descriptor is always watched for input; wake() makes the next wait() return it
//   (is_wake) until drain_wake().
//
// Thread safety: watch, watch_output, unwatch, wait and drain_wake on the reactor thread (the one
// that runs the gate's loop); wake() from any thread. Construct and destroy on one thread.
#pragma once

#include <sys/epoll.h>

namespace vehicledata::emulator {

class Reactor {
public:
    // Throws std::runtime_error when the epoll set or the wake-up descriptor cannot be made.
    Reactor();
    ~Reactor();
    Reactor(const Reactor&) = delete;
    Reactor& operator=(const Reactor&) = delete;

    // Adds `fd` for input (`on`) or removes it from the set.
    void watch(int fd, bool on);
    // Adds `fd` for output only.
    void watch_output(int fd);
    // Removes `fd` (watched for output) from the set.
    void unwatch(int fd);
    // Waits up to `timeout_ms` for readiness; returns how many of `events` it filled (<= 0: none).
    int wait(epoll_event* events, int max, int timeout_ms);

    // Any thread: the reactor's next wait returns at once, with the wake-up descriptor ready.
    void wake();
    bool is_wake(int fd) const { return fd == wake_fd_; }
    // Reads the wake-ups so far (the descriptor is not ready again until the next wake()).
    void drain_wake();

private:
    int ep_ = -1;
    int wake_fd_ = -1;
};

}  // namespace vehicledata::emulator
