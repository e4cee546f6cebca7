// The gate: the emulator's own accept loop and request framing in front of httplib (gate.h).
#include "gate.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

namespace vehicledata::emulator {

namespace {

constexpr std::size_t kRequestLineMax = 8192;  // as httplib's CPPHTTPLIB_REQUEST_URI_MAX_LENGTH
constexpr int kLingerMs = 2000;                // after a refusal, read and drop the rest for this long
// After a response, a worker waits this long for the connection's next request itself (keep-alive
// without the round trip through the reactor); only a request complete by then is served there.
constexpr int kKeepMs = 2;

std::int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

// One line ending at '\n' from `pos`; false if the buffer has no '\n' yet.
bool next_line(const char* d, std::size_t n, std::size_t& pos, std::string_view& line) {
    const void* nl = pos < n ? std::memchr(d + pos, '\n', n - pos) : nullptr;
    if (!nl) return false;
    const std::size_t end = static_cast<std::size_t>(static_cast<const char*>(nl) - d);
    line = std::string_view(d + pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos = end + 1;
    return true;
}

RequestScan refuse(RequestScan r, int status, std::string message) {
    r.kind = RequestScan::Refuse;
    r.status = status;
    r.message = std::move(message);
    return r;
}

// Ends of a chunked body from `pos`: Ready with its end, Incomplete, or Refuse.
// `progress` (optional) resumes after the chunks a previous scan of the same buffer read, and
// records where this one stopped.
RequestScan scan_chunked(RequestScan r, const char* d, std::size_t n, std::size_t pos, const GateLimits& limits,
                         ChunkProgress* progress) {
    std::size_t total = 0;
    if (progress && progress->pos > pos && progress->pos <= n) {
        pos = progress->pos;
        total = progress->total;
    }
    for (;;) {
        std::string_view line;
        const std::size_t line_start = pos;
        if (progress) *progress = {line_start, total};
        if (!next_line(d, n, pos, line)) {
            if (n - line_start > 1024) return refuse(r, 400, "Bad Request: malformed chunk size line");
            return r;
        }
        line = line.substr(0, line.find(';'));
        line = trim(line);
        if (line.empty() || line.size() > 8) return refuse(r, 400, "Bad Request: malformed chunk size line");
        std::size_t size = 0;
        for (char c : line) {
            int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (v < 0) return refuse(r, 400, "Bad Request: malformed chunk size line");
            size = size * 16 + static_cast<std::size_t>(v);
        }
        total += size;
        if (total > limits.max_body)
            return refuse(r, 413, "Payload Too Large: the body is over " + std::to_string(limits.max_body) + " bytes");
        if (size == 0) {  // trailer fields, then an empty line
            for (std::size_t fields = 0;; ++fields) {
                if (fields > limits.max_headers) return refuse(r, 431, "Request Header Fields Too Large: too many trailer fields");
                if (!next_line(d, n, pos, line)) return r;
                if (line.empty()) break;
            }
            r.kind = RequestScan::Ready;
            r.length = pos;
            return r;
        }
        if (n < pos + size + 2) return r;
        if (d[pos + size] != '\r' || d[pos + size + 1] != '\n') return refuse(r, 400, "Bad Request: chunk data does not end with CRLF");
        pos += size + 2;
    }
}

}  // namespace

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
        if (x != y) return false;
    }
    return true;
}

RequestScan scan_request(const char* d, std::size_t n, const GateLimits& limits, ChunkProgress* progress) {
    RequestScan r;
    std::size_t pos = 0;
    while (pos < n && (d[pos] == '\r' || d[pos] == '\n') && pos < 64) ++pos;  // RFC 9112 2.2: leading empty lines
    const std::size_t start = pos;
    r.start = start;
    std::string_view line;
    if (!next_line(d, n, pos, line)) {
        if (n - start > kRequestLineMax) return refuse(r, 414, "URI Too Long: the request line is over 8192 bytes");
        return r;
    }
    if (line.size() > kRequestLineMax) return refuse(r, 414, "URI Too Long: the request line is over 8192 bytes");
    const std::size_t sp1 = line.find(' ');
    const std::size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
    if (sp2 != std::string_view::npos) {
        std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
        if (!target.empty() && target.front() == '/') r.url = std::string(target.substr(0, target.find('?')));
    }
    const bool http11 = sp2 != std::string_view::npos && line.substr(sp2 + 1) == "HTTP/1.1";

    std::size_t fields = 0, hosts = 0, lengths = 0;
    bool chunked = false, has_te = false, expect = false;
    std::string_view te, length;
    for (;;) {
        const std::size_t line_start = pos;
        if (!next_line(d, n, pos, line)) {
            if (n - line_start > 8192 || n > limits.max_header_bytes)
                return refuse(r, 431, "Request Header Fields Too Large: the request head is over " +
                                          std::to_string(limits.max_header_bytes) + " bytes");
            return r;
        }
        if (line.empty()) break;
        if (++fields > limits.max_headers)
            return refuse(r, 431, "Request Header Fields Too Large: more than " + std::to_string(limits.max_headers) +
                                      " header fields");
        if (pos > limits.max_header_bytes)
            return refuse(r, 431, "Request Header Fields Too Large: the request head is over " +
                                      std::to_string(limits.max_header_bytes) + " bytes");
        const std::size_t colon = line.find(':');
        if (colon == std::string_view::npos || colon == 0 || line[colon - 1] == ' ' || line[colon - 1] == '\t')
            return refuse(r, 400, "Bad Request: malformed header field line");
        const std::string_view name = line.substr(0, colon);
        const std::string_view value = trim(line.substr(colon + 1));
        if (iequals(name, "Host")) {
            ++hosts;
        } else if (iequals(name, "Content-Length")) {
            if (lengths++ > 0 && value != length) return refuse(r, 400, "Bad Request: conflicting Content-Length headers");
            length = value;
        } else if (iequals(name, "Transfer-Encoding")) {
            if (has_te) return refuse(r, 400, "Bad Request: more than one Transfer-Encoding header");
            has_te = true;
            te = value;
            chunked = iequals(value, "chunked");
        } else if (iequals(name, "Expect")) {
            expect = iequals(value, "100-continue");
        } else if (iequals(name, "Connection")) {
            for (std::string_view rest = value; !rest.empty();) {  // a list of tokens (RFC 9110, 7.6.1)
                const std::size_t comma = rest.find(',');
                if (iequals(trim(rest.substr(0, comma)), "close")) r.close = true;
                rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
            }
        }
    }
    const std::size_t head = pos;
    if (http11 && hosts == 0)
        return refuse(r, 400, "Bad Request: an HTTP/1.1 request needs a Host header (RFC 9112, section 3.2)");
    if (hosts > 1) return refuse(r, 400, "Bad Request: more than one Host header");
    if (has_te && lengths > 0) return refuse(r, 400, "Bad Request: both Content-Length and Transfer-Encoding");
    r.head_complete = true;
    if (has_te) {
        if (!chunked) return refuse(r, 400, "Bad Request: unsupported Transfer-Encoding '" + std::string(te) + "'");
        RequestScan c = scan_chunked(r, d, n, head, limits, progress);
        if (c.kind == RequestScan::Incomplete) c.expect_continue = expect && n == head;
        return c;
    }
    std::size_t body = 0;
    if (lengths > 0) {
        if (length.empty() || length.size() > 19)
            return refuse(r, length.size() > 19 && length.find_first_not_of("0123456789") == std::string_view::npos
                                 ? 413 : 400,
                          length.size() > 19 ? "Payload Too Large: the body is over " + std::to_string(limits.max_body) + " bytes"
                                             : "Bad Request: invalid Content-Length ''");
        for (char c : length) {
            if (c < '0' || c > '9')
                return refuse(r, 400, "Bad Request: invalid Content-Length '" + std::string(length) + "'");
            body = body * 10 + static_cast<std::size_t>(c - '0');
        }
        if (body > limits.max_body)
            return refuse(r, 413, "Payload Too Large: the body is over " + std::to_string(limits.max_body) + " bytes");
    }
    if (n < head + body) {
        r.expect_continue = expect && n == head;
        return r;
    }
    r.kind = RequestScan::Ready;
    r.length = head + body;
    return r;
}

namespace {

struct Conn {
    int fd = -1;
    std::string buf;
    std::int64_t deadline = 0;
    bool in_request = false;     // some bytes of a request have arrived
    bool continue_sent = false;
    bool eof = false;
    bool busy = false;           // with a worker
    bool close_after = false;
    bool lingering = false;      // refused: draining input until EOF or the deadline
    std::size_t request_start = 0;   // empty lines before it (skipped)
    std::size_t request_length = 0;  // where the request being served ends in buf
    bool request_close = false;      // its Connection header says close
    bool answered = false;           // a request of this connection has been answered (else: a newcomer)
    ChunkProgress progress;          // of the scan of buf's first request (reset when it is consumed)
    std::string out;                 // answer bytes not sent yet (ConnStream); the reactor sends them
    std::size_t out_pos = 0;         // sent of `out`
    bool writing = false;            // the reactor is sending `out` (and reads nothing meanwhile)
    httplib::ContentProvider provider;  // the rest of the answer's body, pulled as the socket drains
    std::size_t provided = 0;        // body bytes the provider has yielded
    std::size_t provide_end = 0;     // the body's length
    std::string remote_ip, local_ip;
    int remote_port = 0, local_port = 0;
};

void address_of(const sockaddr_storage& a, socklen_t len, std::string& ip, int& port) {
    char host[NI_MAXHOST] = {0};
    char serv[NI_MAXSERV] = {0};
    if (::getnameinfo(reinterpret_cast<const sockaddr*>(&a), len, host, sizeof host, serv, sizeof serv,
                      NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
        ip = host;
        port = std::atoi(serv);
    }
}

// Answer bytes buffered on connections, all together (the reactor sends them as sockets drain).
std::atomic<std::size_t> g_out_bytes{0};

// The figures of GateStats that the connection streams count (one gate per process).
struct Counters {
    std::atomic<std::uint64_t> large_handed{0};
    std::atomic<std::uint64_t> worker_writes{0};
};
Counters g_counters;

// Whether a connection still has answer bytes to send (buffered, or a body still to pull).
bool pending(const Conn& c) { return !c.out.empty() || static_cast<bool>(c.provider); }

// httplib's view of one complete request on a connection: reads come from the buffered bytes of
// that request only. Writes go to the connection's output buffer (c.out), which the worker tries
// to send at once and otherwise leaves to the reactor: a slow reader costs a buffer, not a
// worker. A deferred body (defer(): the direct path's answers) is pulled from its provider as the
// socket drains, by whichever thread sends, without a copy (pump). An answer written on
// httplib's path that is larger than the buffer's bound, or any such answer while all
// connections' buffers together are at their bound, is written by the worker itself as the
// socket drains, within the response's total deadline (then dropped).
class ConnStream : public DeferringStream {
public:
    ConnStream(Conn& c, const GateLimits& limits)
        : c_(c), limits_(limits), pos_(c.request_start) {}
    bool is_readable() const override { return pos_ < c_.request_length; }
    bool is_writable() const override {
        start_deadline();
        if (!direct_) return !failed_;
        pollfd p{c_.fd, POLLOUT, 0};
        return wait_ms() > 0 && ::poll(&p, 1, wait_ms()) > 0 && (p.revents & (POLLERR | POLLHUP)) == 0;
    }
    ssize_t read(char* ptr, size_t size) override {
        if (size == 1 && pos_ < c_.request_length) {  // httplib reads the head a byte at a time
            *ptr = c_.buf[pos_++];
            return 1;
        }
        const std::size_t n = std::min(size, c_.request_length - pos_);
        std::memcpy(ptr, c_.buf.data() + pos_, n);
        pos_ += n;
        return static_cast<ssize_t>(n);
    }
    ssize_t write(const char* ptr, size_t size) override {
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
    void defer(httplib::ContentProvider provider, std::size_t length) override {
        if (failed_ || length == 0) return;
        start_deadline();
        c_.provider = std::move(provider);
        c_.provided = 0;
        c_.provide_end = length;
    }
    // After the answer: sends what the socket takes now; the rest stays in c.out (and the
    // provider) for the reactor. False when the connection failed.
    bool flush() {
        if (failed_) return false;
        if (!pump(c_)) failed_ = true;
        return !failed_;
    }
    void get_remote_ip_and_port(std::string& ip, int& port) const override {
        ip = c_.remote_ip;
        port = c_.remote_port;
    }
    void get_local_ip_and_port(std::string& ip, int& port) const override {
        ip = c_.local_ip;
        port = c_.local_port;
    }
    socket_t socket() const override { return c_.fd; }
    bool failed() const { return failed_; }

    // Sends c.out, then pulls the deferred body and sends it, without waiting: stops when the
    // socket is full (what it did not take of c.out stays there; of the body, nothing is copied:
    // the provider is asked again from the first byte not taken) or all is sent. The provider is
    // asked for all the rest at once, so a body in memory goes out in one sendmsg when the socket
    // takes it. True unless the connection failed or the provider stopped (the connection is then
    // closed by the caller).
    static bool pump(Conn& c) {
        // The head goes out with the body's first piece in one sendmsg (send_with_out): one
        // segment for a small answer, so the client wakes once for it, not for a head and a body.
        if (!head_before_body(c) && !send_now(c)) return false;
        while (c.provider && (c.out.empty() || head_before_body(c))) {
            if (c.provided >= c.provide_end) {
                c.provider = nullptr;  // releases what it holds (the cached body, the feed's file)
                break;
            }
            bool ok = true, full = false;
            const std::size_t before = c.provided;
            httplib::DataSink sink;
            sink.write = [&c, &ok, &full](const char* d, std::size_t l) -> bool {
                if (!ok) return false;
                if (full) return true;  // pulled again, from c.provided, when the socket drains
                const ssize_t took = send_with_out(c, d, l);
                if (took < 0) return ok = false;
                c.provided += static_cast<std::size_t>(took);
                if (static_cast<std::size_t>(took) < l) full = true;
                return true;
            };
            sink.is_writable = [&ok, &full] { return ok && !full; };
            if (!c.provider(c.provided, c.provide_end - c.provided, sink) || !ok) {
                c.provider = nullptr;
                release_out(c);
                return false;
            }
            if (full) break;  // the reactor goes on at EPOLLOUT
            if (c.provided == before) {  // the provider gave nothing
                c.provider = nullptr;
                release_out(c);
                return false;
            }
        }
        return true;
    }
    // Sends what is left of c.out and then d[0, l) in one call, without waiting; keeps what the
    // socket did not take of c.out in c.out (none of d: the caller pulls it again). Returns the
    // bytes of d the socket took, -1 when the connection failed.
    static ssize_t send_with_out(Conn& c, const char* d, std::size_t l) {
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
                release_out(c);
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
        release_out(c);  // c.out is sent
        return static_cast<ssize_t>(first == 2 ? l : l - iov[1].iov_len);
    }

    // c.out holds only an answer's head (at most kHeadMax bytes, none sent yet) and its deferred
    // body has not started: pump sends them together.
    static bool head_before_body(const Conn& c) {
        return c.provider && c.provided == 0 && c.out_pos == 0 && c.out.size() <= kHeadMax;
    }
    static constexpr std::size_t kHeadMax = 16384;

    // Sends c.out from c.out_pos without waiting; true unless the connection failed.
    static bool send_now(Conn& c) {
        while (c.out_pos < c.out.size()) {
            const ssize_t w = ::send(c.fd, c.out.data() + c.out_pos, c.out.size() - c.out_pos, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (w > 0) {
                c.out_pos += static_cast<std::size_t>(w);
            } else if (w < 0 && errno == EINTR) {
                continue;
            } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                return true;
            } else {
                release_out(c);
                return false;
            }
        }
        release_out(c);
        return true;
    }
    // Empties c.out (its memory too when large).
    static void release_out(Conn& c) {
        g_out_bytes.fetch_sub(c.out.size(), std::memory_order_relaxed);
        if (c.out.capacity() > 65536) std::string().swap(c.out);
        else c.out.clear();
        c.out_pos = 0;
    }

private:
    // The response's total deadline runs from its first byte, not from the request: computing an
    // answer (the feed ZIP is built on its first request) never eats into the time to send it.
    void start_deadline() const {
        if (deadline_ == 0) deadline_ = now_ms() + limits_.write_timeout_ms;
    }
    int wait_ms() const {
        start_deadline();
        return static_cast<int>(std::max<std::int64_t>(0, deadline_ - now_ms()));
    }
    ssize_t fail() {
        failed_ = true;
        return -1;
    }
    // Writes a then b, waiting while the socket is full until the response's deadline.
    bool send_all(const char* a, std::size_t an, const char* b, std::size_t bn) {
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
    Conn& c_;
    const GateLimits& limits_;
    mutable std::int64_t deadline_ = 0;  // set by the first write (start_deadline)
    std::size_t pos_;
    bool direct_ = false;
    bool large_ = false;  // the answer is over max_output (counted once)
    bool failed_ = false;
};

}  // namespace

// The gate whose worker this thread is (work()), for WorkerWait; null on any other thread.
thread_local void* t_worker = nullptr;

struct Gate::Impl {
    HttpCore& core;
    GateLimits limits;
    RefusalWriter refusal;
    DirectHandler direct;
    int lfd = -1, ep = -1, evfd = -1;
    bool listening = false;
    std::atomic<bool> stopping{false};
    std::unordered_map<int, std::unique_ptr<Conn>> conns;  // reactor thread only
    std::unordered_map<std::string, int> per_address;      // open connections by remote address

    std::mutex mutex;
    std::condition_variable cv;
    // Complete requests for the workers, in two queues: the first request of a new connection
    // (`fresh`) and the next request of a kept one (`ready`). Workers take from them in turn while
    // both hold requests, so a newcomer waits behind at most as many requests as are fresh, not
    // behind every kept connection's (a closed-loop crowd keeps `ready` as long as its connections),
    // and the kept ones still get at least every other worker turn.
    std::deque<Conn*> ready;
    std::deque<Conn*> fresh;
    bool fresh_turn = true;   // the next pick is from `fresh` (when both queues hold requests)
    std::vector<Conn*> done;  // back from the workers
    bool workers_stop = false;
    std::atomic<std::size_t> queued{0};  // ready.size() + fresh.size(), read by workers without the mutex
    std::atomic<int> keeping{0};         // workers waiting for a kept connection's next request
    std::atomic<int> busy{0};            // workers answering a request
    // Workers computing at once: a worker takes a request only while fewer than `compute` hold one
    // outside a WorkerWait (`running`, under the mutex). The other threads are there for requests
    // that wait (a delay fault, a feed build another request is making): they cost a thread, not
    // a turn of the cores.
    int compute;
    int running = 0;
    std::atomic<int> waiting{0};  // workers in a WorkerWait

    Impl(HttpCore& c, GateLimits l, RefusalWriter r, DirectHandler d)
        : core(c), limits(l), refusal(std::move(r)), direct(std::move(d)),
          compute(std::max(1, std::min(limits.threads, limits.compute > 0 ? limits.compute : default_compute()))) {}

    bool can_take() const { return running < compute && (!ready.empty() || !fresh.empty()); }

    void watch(int fd, bool on) {
        epoll_event ev{};
        ev.events = EPOLLIN | EPOLLRDHUP;
        ev.data.fd = fd;
        ::epoll_ctl(ep, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, fd, on ? &ev : nullptr);
    }

    int address_share() const {
        return limits.max_per_address > 0 ? limits.max_per_address : std::max(1, limits.max_connections / 2);
    }

    void close_conn(Conn& c) {
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

    // Answers with a refusal, then drains what the client still sends (so the
    // answer is not lost to a reset) until EOF or a short deadline.
    void refuse(Conn& c, int status, const std::string& url, const std::string& message) {
        const std::string out = refusal(status, url, message);
        ::send(c.fd, out.data(), out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        ::shutdown(c.fd, SHUT_WR);
        c.buf.clear();
        c.progress = {};
        c.lingering = true;
        c.deadline = now_ms() + kLingerMs;
    }

    void accept_all() {
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
            c->deadline = now_ms() + limits.request_timeout_ms;
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

    // Appends what the socket holds now to c.buf (dropped while lingering), up to the
    // largest request the limits allow plus a margin; sets c.eof at end of input or an error.
    void read_available(Conn& c) const {
        const std::size_t cap = limits.max_header_bytes + limits.max_body + 65536;
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

    void on_readable(Conn& c) {
        read_available(c);
        if (c.lingering) {
            if (c.eof) close_conn(c);
            return;
        }
        evaluate(c);
    }

    // Decides about the bytes buffered on an idle (not busy) connection.
    void evaluate(Conn& c) {
        if (c.buf.empty()) {
            if (c.eof) close_conn(c);
            return;
        }
        if (!c.in_request) {
            c.in_request = true;
            c.deadline = now_ms() + limits.request_timeout_ms;
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
        c.busy = true;
        watch(c.fd, false);
        bool wake;  // only a worker that may compute now: the others would wake for nothing
        {
            std::lock_guard<std::mutex> lock(mutex);
            (c.answered ? ready : fresh).push_back(&c);
            queued.store(ready.size() + fresh.size(), std::memory_order_relaxed);
            wake = running < compute;
        }
        if (wake) cv.notify_one();
    }

    void returned(Conn& c) {
        c.busy = false;
        if (pending(c)) {  // the rest of the answer goes out as the socket drains
            c.writing = true;
            c.in_request = false;
            c.deadline = now_ms() + limits.write_timeout_ms;  // the response's total deadline
            epoll_event ev{};
            ev.events = EPOLLOUT;  // not EPOLLIN/EPOLLRDHUP: a half-closed peer would wake us in a loop
            ev.data.fd = c.fd;
            ::epoll_ctl(ep, EPOLL_CTL_ADD, c.fd, &ev);
            return;
        }
        if (c.close_after) return close_conn(c);
        c.in_request = false;
        c.continue_sent = false;
        c.deadline = now_ms() + limits.idle_timeout_ms;
        watch(c.fd, true);
        evaluate(c);  // a pipelined request may be complete already
    }

    // The socket of a connection in `writing` can take more.
    void on_writable(Conn& c) {
        if (!ConnStream::pump(c)) return close_conn(c);
        if (pending(c)) return;  // still more than the socket takes
        c.writing = false;
        ::epoll_ctl(ep, EPOLL_CTL_DEL, c.fd, nullptr);
        c.busy = true;  // returned() takes it from here, as from a worker
        returned(c);
    }

    void sweep() {
        const std::int64_t now = now_ms();
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

    // Whether another complete request follows the one being served in c.buf.
    bool more_after(const Conn& c) const {
        if (c.buf.size() <= c.request_length) return false;
        return scan_request(c.buf.data() + c.request_length, c.buf.size() - c.request_length, limits).kind ==
               RequestScan::Ready;
    }

    static void take(Conn& c, const RequestScan& s) {
        c.request_start = s.start;
        c.request_length = s.length;
        c.request_close = s.close;
    }

    // After a response to a client that has sent everything (end of input): whether the buffer
    // holds another complete request (answered as well, RFC 9112 9.6), which it then takes.
    bool next_buffered(Conn& c) const {
        if (c.buf.empty()) return false;
        const RequestScan s = scan_request(c.buf.data(), c.buf.size(), limits, &c.progress);
        if (s.kind != RequestScan::Ready) return false;
        take(c, s);
        return true;
    }

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
    Next next_request(Conn& c, bool& turn) {
        if (stopping.load(std::memory_order_relaxed) || queued.load(std::memory_order_relaxed) > 0) return Next::Reactor;
        if (c.buf.empty()) {
            if (keeping.fetch_add(1) >= std::max(1, limits.threads / 2)) {
                keeping.fetch_sub(1);
                return Next::Reactor;
            }
            leave_turn(turn);
            pollfd p{c.fd, POLLIN, 0};
            const int n = ::poll(&p, 1, kKeepMs);
            keeping.fetch_sub(1);
            if (n <= 0) return Next::Reactor;
        }
        read_available(c);
        if (c.eof || c.buf.empty()) return Next::Reactor;
        const RequestScan s = scan_request(c.buf.data(), c.buf.size(), limits, &c.progress);
        if (s.kind != RequestScan::Ready) return Next::Reactor;
        take(c, s);
        if (turn) return Next::Serve;
        {
            std::lock_guard<std::mutex> lock(mutex);
            if (running < compute) {
                ++running;
                turn = true;
                return Next::Serve;
            }
            ready.push_back(&c);  // as evaluate() queues it; a worker ending its turn takes it
            queued.store(ready.size() + fresh.size(), std::memory_order_relaxed);
        }
        return Next::Queued;
    }

    // The worker holding `turn` gives it up (another may take a queued request meanwhile).
    void leave_turn(bool& turn) {
        if (!turn) return;
        bool more;
        {
            std::lock_guard<std::mutex> lock(mutex);
            --running;
            more = can_take();
        }
        turn = false;
        if (more) cv.notify_one();
    }

    void work() {
        t_worker = this;
        for (;;) {
            Conn* c = nullptr;
            {
                std::unique_lock<std::mutex> lock(mutex);
                cv.wait(lock, [&] { return workers_stop || can_take(); });
                if (workers_stop) return;
                ++running;
                const bool from_fresh = !fresh.empty() && (fresh_turn || ready.empty());
                std::deque<Conn*>& q = from_fresh ? fresh : ready;
                c = q.front();
                q.pop_front();
                fresh_turn = !from_fresh;
                queued.store(ready.size() + fresh.size(), std::memory_order_relaxed);
            }
            busy.fetch_add(1, std::memory_order_relaxed);
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
            busy.fetch_sub(1, std::memory_order_relaxed);
            if (next == Next::Queued) continue;  // another worker has it (or will): not ours to touch
            // The last answer is out: the client sees its end now, not when the epoll thread
            // next turns (it closes the descriptor).
            if (c->close_after && !pending(*c)) ::shutdown(c->fd, SHUT_WR);
            bool more;
            {
                std::lock_guard<std::mutex> lock(mutex);
                done.push_back(c);
                if (turn) --running;
                more = can_take();
            }
            if (more) cv.notify_one();
            const std::uint64_t one = 1;
            [[maybe_unused]] auto w = ::write(evfd, &one, sizeof one);
        }
    }
};

int default_compute() {
    cpu_set_t set;
    CPU_ZERO(&set);
    int cores = ::sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
    if (cores <= 0) cores = static_cast<int>(std::thread::hardware_concurrency());
    return std::max(2, 2 * cores);
}

WorkerWait::WorkerWait() : gate_(t_worker) {
    if (!gate_) return;
    Gate::Impl& g = *static_cast<Gate::Impl*>(gate_);
    bool more;
    {
        std::lock_guard<std::mutex> lock(g.mutex);
        --g.running;
        more = g.can_take();
    }
    g.waiting.fetch_add(1, std::memory_order_relaxed);
    if (more) g.cv.notify_one();
}

WorkerWait::~WorkerWait() {
    if (!gate_) return;
    Gate::Impl& g = *static_cast<Gate::Impl*>(gate_);
    g.waiting.fetch_sub(1, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(g.mutex);
    ++g.running;  // back to computing (for a moment one more than `compute` may be)
}

Gate::Gate(HttpCore& core, GateLimits limits, RefusalWriter refusal, DirectHandler direct)
    : impl_(new Impl(core, limits, std::move(refusal), std::move(direct))) {
    impl_->ep = ::epoll_create1(EPOLL_CLOEXEC);
    impl_->evfd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (impl_->ep < 0 || impl_->evfd < 0) throw std::runtime_error("gate: cannot create epoll/eventfd");
}

Gate::~Gate() {
    for (auto& [fd, c] : impl_->conns) ::close(fd);
    if (impl_->lfd >= 0) ::close(impl_->lfd);
    ::close(impl_->ep);
    ::close(impl_->evfd);
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
    g.watch(g.evfd, true);
    g.core.set_listening_socket(g.lfd);
    std::vector<std::thread> workers;
    for (int i = 0; i < g.limits.threads; ++i) workers.emplace_back([&g] { g.work(); });
    std::int64_t next_sweep = now_ms() + 100;
    epoll_event events[128];
    while (!g.stopping.load()) {
        const int n = ::epoll_wait(g.ep, events, 128, 100);
        for (int i = 0; i < n; ++i) {
            const int fd = events[i].data.fd;
            if (fd == g.lfd) {
                g.accept_all();
            } else if (fd == g.evfd) {
                std::uint64_t v;
                [[maybe_unused]] auto r = ::read(g.evfd, &v, sizeof v);
                std::vector<Conn*> back;
                {
                    std::lock_guard<std::mutex> lock(g.mutex);
                    back.swap(g.done);
                }
                for (Conn* c : back) g.returned(*c);
            } else if (auto it = g.conns.find(fd); it != g.conns.end() && !it->second->busy) {
                if (it->second->writing)
                    g.on_writable(*it->second);
                else
                    g.on_readable(*it->second);
            }
        }
        if (now_ms() >= next_sweep) {
            g.sweep();
            next_sweep = now_ms() + 100;
        }
    }
    {
        std::lock_guard<std::mutex> lock(g.mutex);
        g.workers_stop = true;
    }
    g.core.set_listening_socket(INVALID_SOCKET);  // a response still being written stops
    g.cv.notify_all();
    for (auto& t : workers) t.join();
}

GateStats Gate::stats() const {
    GateStats s;
    s.workers = impl_->limits.threads;
    s.compute = impl_->compute;
    s.waiting = impl_->waiting.load(std::memory_order_relaxed);
    s.busy = impl_->busy.load(std::memory_order_relaxed);
    s.queued = impl_->queued.load(std::memory_order_relaxed);
    s.buffered_bytes = g_out_bytes.load(std::memory_order_relaxed);
    s.large_handed = g_counters.large_handed.load(std::memory_order_relaxed);
    s.worker_writes = g_counters.worker_writes.load(std::memory_order_relaxed);
    return s;
}

void Gate::stop() {
    impl_->stopping.store(true);
    const std::uint64_t one = 1;
    [[maybe_unused]] auto w = ::write(impl_->evfd, &one, sizeof one);
}

}  // namespace vehicledata::emulator
