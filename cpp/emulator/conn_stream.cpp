// The connection stream (conn_stream.h).
#include "conn_stream.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "worker_turns.h"

namespace vehicledata::emulator {

namespace {

// Answer bytes buffered on connections, all together (the reactor sends them as sockets drain).
std::atomic<std::size_t> g_out_bytes{0};

// The figures of GateStats that the connection streams count (one gate per process).
struct Counters {
    std::atomic<std::uint64_t> large_handed{0};
    std::atomic<std::uint64_t> worker_writes{0};
};
Counters g_counters;

// The head of an answer sent in one call with its body's first piece, when it is at most this long.
constexpr std::size_t kHeadMax = 16384;

// Sends what is left of c.out and then d[0, l) in one call, without waiting; keeps what the
// socket did not take of c.out in c.out (none of d: the caller pulls it again). Returns the
// bytes of d the socket took, -1 when the connection failed.
ssize_t send_with_out(Conn& c, const char* d, std::size_t l) {
    iovec iov[2] = {{c.out.data() + c.out_pos, c.out.size() - c.out_pos}, {const_cast<char*>(d), l}};
    int first = iov[0].iov_len == 0 ? 1 : 0;
    if (first == 1 && l == 0) return 0;
    while (first < 2) {
        msghdr m{};
        m.msg_iov = iov + first;
        m.msg_iovlen = static_cast<std::size_t>(2 - first);
        const ssize_t w = ::sendmsg(c.fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        if (w <= 0) {
            ConnStream::release_out(c);
            return -1;
        }
        std::size_t done = static_cast<std::size_t>(w);
        while (first < 2 && done >= iov[first].iov_len) done -= iov[first++].iov_len;
        if (first < 2) {
            iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + done;
            iov[first].iov_len -= done;
        }
    }
    if (first == 0) {
        c.out_pos = c.out.size() - iov[0].iov_len;
        return 0;
    }
    ConnStream::release_out(c);  // c.out is sent
    return static_cast<ssize_t>(first == 2 ? l : l - iov[1].iov_len);
}

// c.out holds only an answer's head (at most kHeadMax bytes, none sent yet) and its deferred
// body has not started: pump sends them together.
bool head_before_body(const Conn& c) {
    return c.provider && c.provided == 0 && c.out_pos == 0 && c.out.size() <= kHeadMax;
}

// Sends c.out from c.out_pos without waiting; true unless the connection failed.
bool send_now(Conn& c) {
    while (c.out_pos < c.out.size()) {
        const ssize_t w = ::send(c.fd, c.out.data() + c.out_pos, c.out.size() - c.out_pos, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) {
            c.out_pos += static_cast<std::size_t>(w);
        } else if (w < 0 && errno == EINTR) {
            continue;
        } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return true;
        } else {
            ConnStream::release_out(c);
            return false;
        }
    }
    ConnStream::release_out(c);
    return true;
}

// The sink pump() hands a deferred body's provider, one per thread: httplib's DataSink sets up a
// std::ostream and its locale when it is constructed (about 1.4k instructions), too much for every
// pump of every answer. pump() is never re-entered on a thread (a provider only writes to the sink),
// so the one sink serves each call in turn, pointed at its connection.
struct PullSink {
    httplib::DataSink sink;
    Conn* c = nullptr;
    bool ok = true;    // the connection has not failed
    bool full = false; // the socket took less than offered: the rest is pulled again when it drains
    PullSink() {
        sink.write = [this](const char* d, std::size_t l) -> bool {
            if (!ok) return false;
            if (full) return true;  // pulled again, from c->provided, when the socket drains
            const ssize_t took = send_with_out(*c, d, l);
            if (took < 0) return ok = false;
            c->provided += static_cast<std::size_t>(took);
            if (static_cast<std::size_t>(took) < l) full = true;
            return true;
        };
        sink.is_writable = [this] { return ok && !full; };
    }
    PullSink(const PullSink&) = delete;
    PullSink& operator=(const PullSink&) = delete;
};

PullSink& pull_sink(Conn& c) {
    thread_local PullSink s;
    s.c = &c;
    s.ok = true;
    s.full = false;
    return s;
}

}  // namespace

std::int64_t steady_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

StreamTotals stream_totals() {
    StreamTotals t;
    t.buffered_bytes = g_out_bytes.load(std::memory_order_relaxed);
    t.large_handed = g_counters.large_handed.load(std::memory_order_relaxed);
    t.worker_writes = g_counters.worker_writes.load(std::memory_order_relaxed);
    return t;
}

void read_available(Conn& c, std::size_t cap) {
    char tmp[16384];
    for (;;) {
        const ssize_t r = ::recv(c.fd, tmp, sizeof tmp, MSG_DONTWAIT);
        if (r > 0) {
            if (c.lingering) continue;
            c.buf.append(tmp, static_cast<std::size_t>(r));
            if (c.buf.size() > cap) break;
        } else if (r == 0) {
            c.eof = true;
            break;
        } else if (errno == EINTR) {
            continue;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            break;
        } else {
            c.eof = true;
            c.buf.clear();
            break;
        }
    }
}

ConnStream::ConnStream(Conn& c, const GateLimits& limits) : c_(c), limits_(limits), pos_(c.request_start) {}

bool ConnStream::is_readable() const { return pos_ < c_.request_length; }

bool ConnStream::is_writable() const {
    start_deadline();
    if (!direct_) return !failed_;
    pollfd p{c_.fd, POLLOUT, 0};
    return wait_ms() > 0 && ::poll(&p, 1, wait_ms()) > 0 && (p.revents & (POLLERR | POLLHUP)) == 0;
}

ssize_t ConnStream::read(char* ptr, size_t size) {
    if (size == 1 && pos_ < c_.request_length) {  // httplib reads the head a byte at a time
        *ptr = c_.buf[pos_++];
        return 1;
    }
    const std::size_t n = std::min(size, c_.request_length - pos_);
    std::memcpy(ptr, c_.buf.data() + pos_, n);
    pos_ += n;
    return static_cast<ssize_t>(n);
}

ssize_t ConnStream::write(const char* ptr, size_t size) {
    if (failed_) return -1;
    start_deadline();
    if (!direct_ && g_out_bytes.load(std::memory_order_relaxed) + size <= limits_.max_output_total) {
        if (!large_ && c_.out.size() + size > limits_.max_output) {
            large_ = true;  // over the connection's share: still the epoll thread's to send
            g_counters.large_handed.fetch_add(1, std::memory_order_relaxed);
        }
        c_.out.append(ptr, size);
        g_out_bytes.fetch_add(size, std::memory_order_relaxed);
        return static_cast<ssize_t>(size);
    }
    if (!direct_) g_counters.worker_writes.fetch_add(1, std::memory_order_relaxed);
    direct_ = true;  // from here on this answer goes straight to the socket
    const bool ok = send_all(c_.out.data(), c_.out.size(), ptr, size);
    release_out(c_);
    if (!ok) return fail();
    return static_cast<ssize_t>(size);
}

void ConnStream::defer(httplib::ContentProvider provider, std::size_t length) {
    if (failed_ || length == 0) return;
    start_deadline();
    c_.provider = std::move(provider);
    c_.provided = 0;
    c_.provide_end = length;
}

bool ConnStream::flush() {
    if (failed_) return false;
    if (!pump(c_)) failed_ = true;
    return !failed_;
}

void ConnStream::get_remote_ip_and_port(std::string& ip, int& port) const {
    ip = c_.remote_ip;
    port = c_.remote_port;
}

void ConnStream::get_local_ip_and_port(std::string& ip, int& port) const {
    ip = c_.local_ip;
    port = c_.local_port;
}

socket_t ConnStream::socket() const { return c_.fd; }

bool ConnStream::pump(Conn& c) {
    // The head goes out with the body's first piece in one sendmsg (send_with_out): one
    // segment for a small answer, so the client wakes once for it, not for a head and a body.
    if (!head_before_body(c) && !send_now(c)) return false;
    while (c.provider && (c.out.empty() || head_before_body(c))) {
        if (c.provided >= c.provide_end) {
            c.provider = nullptr;  // releases what it holds (the cached body, the feed's file)
            break;
        }
        const std::size_t before = c.provided;
        PullSink& pull = pull_sink(c);
        if (!c.provider(c.provided, c.provide_end - c.provided, pull.sink) || !pull.ok) {
            c.provider = nullptr;
            release_out(c);
            return false;
        }
        if (pull.full) break;  // the reactor goes on at EPOLLOUT
        if (c.provided == before) {  // the provider gave nothing
            c.provider = nullptr;
            release_out(c);
            return false;
        }
    }
    return true;
}

void ConnStream::release_out(Conn& c) {
    g_out_bytes.fetch_sub(c.out.size(), std::memory_order_relaxed);
    if (c.out.capacity() > 65536) std::string().swap(c.out);
    else c.out.clear();
    c.out_pos = 0;
}

inline void ConnStream::start_deadline() const {
    if (deadline_ == 0) deadline_ = steady_ms() + limits_.write_timeout_ms;
}

inline int ConnStream::wait_ms() const {
    start_deadline();
    return static_cast<int>(std::max<std::int64_t>(0, deadline_ - steady_ms()));
}

ssize_t ConnStream::fail() {
    failed_ = true;
    return -1;
}

bool ConnStream::send_all(const char* a, std::size_t an, const char* b, std::size_t bn) {
    iovec iov[2] = {{const_cast<char*>(a), an}, {const_cast<char*>(b), bn}};
    int first = an == 0 ? 1 : 0;
    while (first < 2) {
        msghdr m{};
        m.msg_iov = iov + first;
        m.msg_iovlen = static_cast<std::size_t>(2 - first);
        const ssize_t w = ::sendmsg(c_.fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) {
            std::size_t done = static_cast<std::size_t>(w);
            while (first < 2 && done >= iov[first].iov_len) done -= iov[first++].iov_len;
            if (first < 2) {
                iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + done;
                iov[first].iov_len -= done;
            }
        } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            pollfd p{c_.fd, POLLOUT, 0};
            const int left = wait_ms();
            if (left <= 0) return false;
            const WorkerWait waiting;  // on a slow reader, with all buffers full: not computing
            if (::poll(&p, 1, left) <= 0) return false;
        } else if (w == 0 && iov[first].iov_len == 0) {
            ++first;
        } else {
            return false;
        }
    }
    return true;
}

}  // namespace vehicledata::emulator
