// The gate's reactor (reactor.h).
#include "reactor.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>
#include <stdexcept>

namespace vehicledata::emulator {

Reactor::Reactor() {
    ep_ = ::epoll_create1(EPOLL_CLOEXEC);
    wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (ep_ < 0 || wake_fd_ < 0) {
        if (ep_ >= 0) ::close(ep_);
        if (wake_fd_ >= 0) ::close(wake_fd_);
        throw std::runtime_error("gate: cannot create epoll/eventfd");
    }
    watch(wake_fd_, true);
}

Reactor::~Reactor() {
    ::close(ep_);
    ::close(wake_fd_);
}

void Reactor::watch(int fd, bool on) {
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.fd = fd;
    ::epoll_ctl(ep_, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, fd, on ? &ev : nullptr);
}

void Reactor::watch_output(int fd) {
    epoll_event ev{};
    ev.events = EPOLLOUT;  // not EPOLLIN/EPOLLRDHUP: a half-closed peer would wake us in a loop
    ev.data.fd = fd;
    ::epoll_ctl(ep_, EPOLL_CTL_ADD, fd, &ev);
}

void Reactor::unwatch(int fd) { ::epoll_ctl(ep_, EPOLL_CTL_DEL, fd, nullptr); }

int Reactor::wait(epoll_event* events, int max, int timeout_ms) { return ::epoll_wait(ep_, events, max, timeout_ms); }

void Reactor::wake() {
    const std::uint64_t one = 1;
    [[maybe_unused]] auto w = ::write(wake_fd_, &one, sizeof one);
}

void Reactor::drain_wake() {
    std::uint64_t v;
    [[maybe_unused]] auto r = ::read(wake_fd_, &v, sizeof v);
}

}  // namespace vehicledata::emulator
