// The gate: the emulator's accept loop and connection lifecycle, wiring the reactor, the request
// framing, the worker turns and the connection stream (gate.h).
#include "gate.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "reactor.h"

namespace vehicledata::emulator {

namespace {

constexpr int kLingerMs = 2000;                // after a refusal, read and drop the rest for this long
// After a response, a worker waits this long for the connection's next request itself (keep-alive
// without the round trip through the reactor); only a request complete by then is served there.
constexpr int kKeepMs = 2;

void address_of(const sockaddr_storage& a, socklen_t len, std::string& ip, int& port) {
    char host[NI_MAXHOST] = {0};
    char serv[NI_MAXSERV] = {0};
    if (::getnameinfo(reinterpret_cast<const sockaddr*>(&a), len, host, sizeof host, serv, sizeof serv,
                      NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
        ip = host;
        port = std::atoi(serv);
    }
}

}  // namespace

struct Gate::Impl {
    HttpCore& core;
    GateLimits limits;
    RefusalWriter refusal;
    DirectHandler direct;
    DirectHandler quick;  // set before run(): the reactor's own answers (set_quick)
    // Those answers, counted (GateStats::quick): written by the reactor thread only, read by any.
    std::atomic<std::uint64_t> quick_answers{0};
    int lfd = -1;
    bool listening = false;
    std::atomic<bool> stopping{false};
    std::unordered_map<int, std::unique_ptr<Conn>> conns;  // reactor thread only
    std::unordered_map<std::string, int> per_address;      // open connections by remote address
    Reactor reactor;
    WorkerTurns turns;

    Impl(HttpCore& c, GateLimits l, RefusalWriter r, DirectHandler d)
        : core(c), limits(l), refusal(std::move(r)), direct(std::move(d)), turns(limits.threads, limits.compute) {}

    void watch(int fd, bool on) { reactor.watch(fd, on); }

    int address_share() const {
        return limits.max_per_address > 0 ? limits.max_per_address : std::max(1, limits.max_connections / 2);
    }

    // ---- the reactor thread (run()): connections while they are not `busy`

    // Closes a connection and forgets it; listens again once below the cap.
    void close_conn(Conn& c);

    // Answers with a refusal, then drains what the client still sends (so the
    // answer is not lost to a reset) until EOF or a short deadline.
    void refuse(Conn& c, int status, const std::string& url, const std::string& message);

    // Accepts what the backlog holds, up to the cap and the address's share; a new connection's
    // first bytes are read at once.
    void accept_all();

    // Appends what the socket holds now to c.buf (dropped while lingering), up to the
    // largest request the limits allow plus a margin; sets c.eof at end of input or an error.
    void read_available(Conn& c) const { emulator::read_available(c, limits.max_header_bytes + limits.max_body + 65536); }

    // Input on an idle connection (dropped while lingering after a refusal).
    void on_readable(Conn& c);

    // Decides about the bytes buffered on an idle (not busy) connection.
    void evaluate(Conn& c);
    // The reactor's own answer to the request just taken (set_quick): true once answered.
    bool answer_quick(Conn& c);

    // A connection back from its worker: the rest of its answer to send as the socket drains, a
    // close, or the wait for its next request.
    void returned(Conn& c);

    // The socket of a connection in `writing` can take more.
    void on_writable(Conn& c);

    // Every 100 ms: the deadlines (408 for a request not complete in time; idle and lingering
    // connections closed) and listening again below the cap.
    void sweep();

    // ---- the worker threads: a `busy` connection, held by one of them

    // Whether another complete request follows the one being served in c.buf.
    bool more_after(const Conn& c) const;

    // The request `s` found at the start of c.buf becomes the one served.
    static void take(Conn& c, const RequestScan& s);

    // After a response to a client that has sent everything (end of input): whether the buffer
    // holds another complete request (answered as well, RFC 9112 9.6), which it then takes.
    bool next_buffered(Conn& c) const;

    // What a worker does after a response when the connection's next request is not buffered whole.
    enum class Next {
        Serve,    // the next request is complete and this worker answers it (in its turn)
        Reactor,  // back to the reactor (nothing within kKeepMs, a partial or refused request, end of input)
        Queued,   // the next request is complete but every turn is taken: queued for the next free one
    };

    // On a worker, after a response: whether the connection's next request is complete, read
    // here without a trip through the reactor (the wait for it bounded by kKeepMs, and only
    // while no other connection's request is queued and at most half the workers wait so).
    // The wait leaves the worker's turn of the cores to the others (`turn` false meanwhile); with
    // the request in, it takes a turn if one is free, else queues the connection as the reactor
    // would, without the reactor's two wake-ups. Anything else (nothing yet, a partial or refused
    // request, end of input) goes back to the reactor, which applies the deadlines and refusals
    // as for any other bytes.
    Next next_request(Conn& c, bool& turn);

    // A worker's loop: take a connection, answer its request (direct path, else httplib), keep
    // the connection for its next request while that is complete, hand it back to the reactor.
    void work();
};

void Gate::Impl::close_conn(Conn& c) {
    if (!c.out.empty()) ConnStream::release_out(c);
    c.provider = nullptr;
    if (auto it = per_address.find(c.remote_ip); it != per_address.end() && --it->second <= 0)
        per_address.erase(it);
    ::close(c.fd);  // also leaves the epoll set
    conns.erase(c.fd);
    if (!listening && conns.size() < static_cast<std::size_t>(limits.max_connections)) {
        watch(lfd, true);
        listening = true;
    }
}

void Gate::Impl::refuse(Conn& c, int status, const std::string& url, const std::string& message) {
    const std::string out = refusal(status, url, message);
    ::send(c.fd, out.data(), out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    ::shutdown(c.fd, SHUT_WR);
    c.buf.clear();
    c.progress = {};
    c.lingering = true;
    c.deadline = steady_ms() + kLingerMs;
}

void Gate::Impl::accept_all() {
    while (conns.size() < static_cast<std::size_t>(limits.max_connections)) {
        sockaddr_storage peer{};
        socklen_t plen = sizeof peer;
        const int fd = ::accept4(lfd, reinterpret_cast<sockaddr*>(&peer), &plen, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if ((errno == EMFILE || errno == ENFILE) && listening) {  // out of descriptors: the
                watch(lfd, false);  // rest wait in the backlog (no busy loop on a readable socket);
                listening = false;  // the sweep listens again
            }
            break;
        }
        const int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        auto c = std::make_unique<Conn>();
        c->fd = fd;
        address_of(peer, plen, c->remote_ip, c->remote_port);
        // One address holds at most its share of the cap (as nginx's limit_conn, HAProxy's
        // per-source limits): past it, a 503 sent without waiting, and the socket closed.
        int& open_here = per_address[c->remote_ip];
        if (open_here >= address_share()) {
            const std::string out = refusal(503, "/", "Service Unavailable: more than " +
                                                          std::to_string(address_share()) +
                                                          " open connections from this address");
            ::send(fd, out.data(), out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
            ::shutdown(fd, SHUT_WR);
            ::close(fd);
            continue;
        }
        ++open_here;
        sockaddr_storage local{};
        socklen_t llen = sizeof local;
        if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &llen) == 0)
            address_of(local, llen, c->local_ip, c->local_port);
        c->deadline = steady_ms() + limits.request_timeout_ms;
        watch(fd, true);
        Conn& added = *c;
        conns.emplace(fd, std::move(c));
        // A client usually sends its request right behind the handshake: read it now, not on
        // the next turn of the loop (under load a turn is milliseconds; the soak's probe).
        on_readable(added);
    }
    if (conns.size() >= static_cast<std::size_t>(limits.max_connections) && listening) {
        watch(lfd, false);  // the rest wait in the listen backlog
        listening = false;
    }
}

void Gate::Impl::on_readable(Conn& c) {
    read_available(c);
    if (c.lingering) {
        if (c.eof) close_conn(c);
        return;
    }
    evaluate(c);
}

void Gate::Impl::evaluate(Conn& c) {
    for (;;) {  // one request at a time: the next is looked at only when the reactor answered one
        if (c.buf.empty()) {
            if (c.eof) close_conn(c);
            return;
        }
        if (!c.in_request) {
            c.in_request = true;
            c.deadline = steady_ms() + limits.request_timeout_ms;
        }
        const RequestScan s = scan_request(c.buf.data(), c.buf.size(), limits, &c.progress);
        if (s.kind == RequestScan::Refuse) return refuse(c, s.status, s.url, s.message);
        if (s.kind == RequestScan::Incomplete) {
            if (c.eof) return close_conn(c);
            if (s.expect_continue && !c.continue_sent) {
                static const char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
                ::send(c.fd, kContinue, sizeof kContinue - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
                c.continue_sent = true;
            }
            if (c.buf.size() > limits.max_header_bytes + limits.max_body + 65536) close_conn(c);
            return;
        }
        take(c, s);
        if (!answer_quick(c)) {
            c.busy = true;
            watch(c.fd, false);
            turns.queue(&c, c.answered);
            return;
        }
        if (pending(c) || c.close_after) {  // as after a worker's answer: the rest drains, or it closes
            c.busy = true;
            watch(c.fd, false);
            if (c.close_after && !pending(c)) ::shutdown(c.fd, SHUT_WR);
            return returned(c);
        }
        c.in_request = false;  // answered whole; still watched for input
        c.continue_sent = false;
        c.deadline = steady_ms() + limits.idle_timeout_ms;
    }
}

bool Gate::Impl::answer_quick(Conn& c) {
    // Not at end of input (the last request's Connection: close is the worker's to work out), and
    // only while the output buffers have room for a whole share: a ConnStream over its bound writes
    // to the socket itself, waiting on it, which the reactor must never do.
    if (!quick || c.eof || stopping.load(std::memory_order_relaxed) ||
        stream_totals().buffered_bytes + limits.max_output > limits.max_output_total)
        return false;
    ConnStream strm(c, limits);
    bool closed = false;
    const bool last = c.request_close;
    const std::string_view raw(c.buf.data() + c.request_start, c.request_length - c.request_start);
    if (!quick(raw, strm, last, closed)) return false;
    strm.flush();
    // One writer: a plain load and store, not a locked read-modify-write.
    quick_answers.store(quick_answers.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    c.answered = true;
    c.buf.erase(0, c.request_length);
    c.progress = {};
    if (closed || last || strm.failed()) c.close_after = true;
    return true;
}

void Gate::Impl::returned(Conn& c) {
    c.busy = false;
    if (pending(c)) {  // the rest of the answer goes out as the socket drains
        c.writing = true;
        c.in_request = false;
        c.deadline = steady_ms() + limits.write_timeout_ms;  // the response's total deadline
        reactor.watch_output(c.fd);
        return;
    }
    if (c.close_after) return close_conn(c);
    c.in_request = false;
    c.continue_sent = false;
    c.deadline = steady_ms() + limits.idle_timeout_ms;
    watch(c.fd, true);
    evaluate(c);  // a pipelined request may be complete already
}

void Gate::Impl::on_writable(Conn& c) {
    if (!ConnStream::pump(c)) return close_conn(c);
    if (pending(c)) return;  // still more than the socket takes
    c.writing = false;
    reactor.unwatch(c.fd);
    c.busy = true;  // returned() takes it from here, as from a worker
    returned(c);
}

void Gate::Impl::sweep() {
    const std::int64_t now = steady_ms();
    if (!listening && conns.size() < static_cast<std::size_t>(limits.max_connections)) {
        watch(lfd, true);
        listening = true;
    }
    std::vector<Conn*> late;
    for (auto& [fd, c] : conns)
        if (!c->busy && c->deadline <= now) late.push_back(c.get());
    for (Conn* c : late) {
        if (c->in_request && !c->lingering) {
            refuse(*c, 408, "/", "Request Timeout: the request did not arrive within " +
                                     std::to_string(limits.request_timeout_ms) + " ms");
            c->deadline = now + kLingerMs;
        } else {
            close_conn(*c);
        }
    }
}

bool Gate::Impl::more_after(const Conn& c) const {
    if (c.buf.size() <= c.request_length) return false;
    return scan_request(c.buf.data() + c.request_length, c.buf.size() - c.request_length, limits).kind ==
           RequestScan::Ready;
}

void Gate::Impl::take(Conn& c, const RequestScan& s) {
    c.request_start = s.start;
    c.request_length = s.length;
    c.request_close = s.close;
}

bool Gate::Impl::next_buffered(Conn& c) const {
    if (c.buf.empty()) return false;
    const RequestScan s = scan_request(c.buf.data(), c.buf.size(), limits, &c.progress);
    if (s.kind != RequestScan::Ready) return false;
    take(c, s);
    return true;
}

Gate::Impl::Next Gate::Impl::next_request(Conn& c, bool& turn) {
    if (stopping.load(std::memory_order_relaxed) || turns.queued() > 0) return Next::Reactor;
    if (c.buf.empty()) {
        if (!turns.begin_keep()) return Next::Reactor;
        turns.leave_turn(turn);
        pollfd p{c.fd, POLLIN, 0};
        const int n = ::poll(&p, 1, kKeepMs);
        turns.end_keep();
        if (n <= 0) return Next::Reactor;
    }
    read_available(c);
    if (c.eof || c.buf.empty()) return Next::Reactor;
    const RequestScan s = scan_request(c.buf.data(), c.buf.size(), limits, &c.progress);
    if (s.kind != RequestScan::Ready) return Next::Reactor;
    take(c, s);
    if (turn) return Next::Serve;
    return turns.turn_or_queue(&c, turn) ? Next::Serve : Next::Queued;
}

void Gate::Impl::work() {
    turns.bind_thread();
    for (;;) {
        Conn* c = turns.take();
        if (!c) return;
        bool turn = true;  // this worker counts in `running`
        Next next = Next::Reactor;
        for (;;) {
            ConnStream strm(*c, limits);
            bool closed = false;
            // At end of input the last complete request is answered with Connection: close; one
            // whose Connection header says close (in any case: httplib compares "close" exactly)
            // is closed after its answer.
            const bool last = c->request_close || (c->eof && !more_after(*c));
            const std::string_view raw(c->buf.data() + c->request_start, c->request_length - c->request_start);
            if (!direct || !direct(raw, strm, last, closed)) core.process_request(strm, last, closed, nullptr);
            strm.flush();
            c->answered = true;
            c->buf.erase(0, c->request_length);  // a body httplib did not read goes with its request
            c->progress = {};
            if (closed || last || strm.failed()) {
                c->close_after = true;
                break;
            }
            if (pending(*c)) break;  // a slow reader: the reactor sends the rest
            if (c->eof) {
                if (!next_buffered(*c)) break;
                continue;
            }
            next = next_request(*c, turn);
            if (next != Next::Serve) break;
        }
        turns.put_down();
        if (next == Next::Queued) continue;  // another worker has it (or will): not ours to touch
        // The last answer is out: the client sees its end now, not when the epoll thread
        // next turns (it closes the descriptor).
        if (c->close_after && !pending(*c)) ::shutdown(c->fd, SHUT_WR);
        turns.hand_back(c, turn);
        reactor.wake();
    }
}

void Gate::set_quick(DirectHandler quick) { impl_->quick = std::move(quick); }

Gate::Gate(HttpCore& core, GateLimits limits, RefusalWriter refusal, DirectHandler direct)
    : impl_(new Impl(core, limits, std::move(refusal), std::move(direct))) {}

Gate::~Gate() {
    for (auto& [fd, c] : impl_->conns) ::close(fd);
    if (impl_->lfd >= 0) ::close(impl_->lfd);
    delete impl_;
}

int Gate::bind(const std::string& host, int port) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* res = nullptr;
    const std::string service = std::to_string(port);
    if (::getaddrinfo(host.c_str(), service.c_str(), &hints, &res) != 0 || !res)
        throw std::runtime_error("cannot resolve " + host);
    int fd = -1;
    for (addrinfo* a = res; a; a = a->ai_next) {
        fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        const int one = 1;
        ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, impl_->limits.backlog) == 0) break;
        ::close(fd);
        fd = -1;
    }
    ::freeaddrinfo(res);
    if (fd < 0) throw std::runtime_error("cannot listen on " + host + ":" + service);
    impl_->lfd = fd;
    sockaddr_storage local{};
    socklen_t len = sizeof local;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len);
    std::string ip;
    int bound = -1;
    address_of(local, len, ip, bound);
    return bound;
}

void Gate::run() {
    Impl& g = *impl_;
    if (g.lfd < 0) throw std::runtime_error("gate: run() before bind()");
    rlimit files{};  // a connection is a descriptor: allow as many as the hard limit does
    if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
        files.rlim_cur = files.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &files);
    }
    g.watch(g.lfd, true);
    g.listening = true;
    g.core.set_listening_socket(g.lfd);
    std::vector<std::thread> workers;
    for (int i = 0; i < g.limits.threads; ++i) workers.emplace_back([&g] { g.work(); });
    std::int64_t next_sweep = steady_ms() + 100;
    epoll_event events[128];
    while (!g.stopping.load()) {
        const int n = g.reactor.wait(events, 128, 100);
        for (int i = 0; i < n; ++i) {
            const int fd = events[i].data.fd;
            if (fd == g.lfd) {
                g.accept_all();
            } else if (g.reactor.is_wake(fd)) {
                g.reactor.drain_wake();
                std::vector<Conn*> back;
                g.turns.take_back(back);
                for (Conn* c : back) g.returned(*c);
            } else if (auto it = g.conns.find(fd); it != g.conns.end() && !it->second->busy) {
                if (it->second->writing)
                    g.on_writable(*it->second);
                else
                    g.on_readable(*it->second);
            }
        }
        if (steady_ms() >= next_sweep) {
            g.sweep();
            next_sweep = steady_ms() + 100;
        }
    }
    g.turns.stop();
    g.core.set_listening_socket(INVALID_SOCKET);  // a response still being written stops
    for (auto& t : workers) t.join();
}

GateStats Gate::stats() const {
    GateStats s;
    s.workers = impl_->limits.threads;
    s.compute = impl_->turns.compute();
    s.waiting = impl_->turns.waiting();
    s.busy = impl_->turns.busy();
    s.queued = impl_->turns.queued();
    const StreamTotals t = stream_totals();
    s.buffered_bytes = t.buffered_bytes;
    s.large_handed = t.large_handed;
    s.worker_writes = t.worker_writes;
    s.quick = impl_->quick_answers.load(std::memory_order_relaxed);
    return s;
}

void Gate::stop() {
    impl_->stopping.store(true);
    impl_->reactor.wake();
}

}  // namespace vehicledata::emulator
