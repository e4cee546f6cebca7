// The emulator's connection handling in front of cpp-httplib ("the gate").
//
// cpp-httplib 0.11 (Debian) gives each connection a worker thread for as long as
// it is open and has no whole-request deadline, header-count limit or
// connection cap, so a few slow or hostile clients starve everyone else
// (docs/reliability.md).  The gate owns the listening socket instead: one
// epoll thread accepts connections (at most `max_connections` open; more wait
// in the listen backlog), reads each request until its head and body are
// complete, enforces the limits below and answers a violation itself (JSON
// error body, then closes).  Only a complete request reaches a worker thread,
// which hands exactly those bytes to httplib's request processing; bytes after
// it (a pipelined request) stay buffered for the next round, and a body nobody
// reads (a GET's Content-Length) is discarded with its request.  The worker
// writes its answer into the connection's output buffer and sends what the
// socket takes at once; the rest the epoll thread sends as the socket drains
// (reading nothing more from that connection meanwhile), so a slow reader costs
// a buffer, not a worker.  Each response has a total deadline (write_timeout_ms).
// A body the direct path answers (direct.h: every GET/HEAD of the data endpoints
// and the feed download) is not written by the worker at all: it hands the body's
// content provider to the stream (DeferringStream), and whichever thread sends pulls
// it as the socket drains, offering the socket all that the provider yields (a body in
// memory whole, the feed ZIP 64 KiB at a time straight from its file) and asking again
// from the first byte not taken, so nothing is copied and no worker waits on a
// socket for it.  An answer on httplib's own path (requests with a body or an
// Expect header) goes to the output buffer
// whole, also when it is larger than max_output (counted: GateStats::large_handed),
// and the epoll thread sends it the same way; only one made while all buffers
// together are at max_output_total is still written by the worker itself, within
// that deadline (GateStats::worker_writes).  The first request of a new
// connection waits in its own queue, which workers take from in turn with the
// kept connections' queue. Of the `threads` workers only `compute` take requests at
// once (twice the cores by default): more runnable threads than that only queue in
// the kernel's scheduler. A worker that waits instead of computing (WorkerWait: a
// delay fault's sleep, another request's feed build, its own write to a full socket)
// leaves its turn to another meanwhile; so does a worker waiting (at most 2 ms, at most
// half the workers at once) for its kept connection's next request, which it then answers
// itself if a turn is free and otherwise queues, without a trip through the epoll thread.
// A deferred body's first piece leaves with the answer's head in one sendmsg (a cached
// body in memory: all of it, when the socket takes it).
//
// Thread safety: run() on one thread; stop() from any thread.
#pragma once

#include <httplib.h>

#include "httplib_adapter.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace vehicledata::emulator {

struct GateLimits {
    int threads = 16;                       // worker threads: at most this many requests in hand at once
    int compute = 0;                        // of them, computing at once (the rest wait in a WorkerWait:
                                            // a delay fault, another request's feed build); 0: twice the
                                            // cores, at least 2 (default_compute()); at most `threads`
    int max_connections = 4096;             // open connections; more wait in the backlog
    int max_per_address = 0;                // open connections from one address (0: half of max_connections);
                                            // more are answered 503 and closed at once
    int backlog = 1024;                     // listen(2) backlog: the queue past the cap
    std::size_t max_headers = 100;          // header fields per request -> 431
    std::size_t max_header_bytes = 16384;   // request line + headers -> 431 (request line alone over 8192: 414)
    std::size_t max_body = 1 << 20;         // Content-Length or chunked body -> 413
    int request_timeout_ms = 10000;         // from a request's first byte to its last -> 408
    int idle_timeout_ms = 5000;             // keep-alive wait for the next request's first byte (then closed)
    int write_timeout_ms = 30000;           // total time to send one response; a slower reader is dropped
    std::size_t max_output = 8u << 20;      // answer bytes per connection before an answer counts as large
                                            // (GateStats::large_handed; still buffered, within max_output_total)
    std::size_t max_output_total = 256u << 20;  // answer bytes buffered on all connections together
};

// A stream that can finish an answer by itself (the gate's connection stream): after the head,
// the writer hands over the body instead of writing it, and the gate sends it as the socket
// drains, calling `provider` as httplib does (offset, bytes wanted: all the rest, sink). What
// the socket does not take of a piece is not kept: the provider is called again from that
// offset when the socket drains, so it must yield the same bytes for the same offset (a body
// in memory, a file read with pread). `length` > 0; the provider (and what it holds) lives
// until the body is sent or the connection is closed.
class DeferringStream : public httplib::Stream {
public:
    virtual void defer(httplib::ContentProvider provider, std::size_t length) = 0;
};
// A rendered body over this size is deferred rather than written to the connection's buffer
// (direct.h).
constexpr std::size_t kPullBytes = 64 * 1024;

// The server's own answer to one complete request, bypassing httplib's parsing (direct.h):
// `request` is its bytes as the gate framed them. Returns false, having done nothing, to leave the
// request to httplib's processing; true once answered, with `connection_closed` set as httplib's
// process_request would set it.
using DirectHandler = std::function<bool(std::string_view request, httplib::Stream& strm, bool close_connection,
                                         bool& connection_closed)>;

// Builds a gate refusal: status, exception and message; `url` is the request path or "/".
using RefusalWriter = std::function<std::string(int status, const std::string& url, const std::string& message)>;

// The number of workers computing at once when GateLimits::compute is 0: twice the cores this
// process may run on, at least 2. More runnable workers than that only queue in the kernel's
// scheduler, and a new connection's answer waits behind all of them (docs/reliability.md).
int default_compute();

// Marks a wait on a gate worker (a sleep, a lock another request holds while it builds): while it
// lasts, the worker does not count against GateLimits::compute, so another worker takes the next
// queued request. Elsewhere (no gate worker on this thread) it does nothing. Not nested.
class WorkerWait {
public:
    WorkerWait();
    ~WorkerWait();
    WorkerWait(const WorkerWait&) = delete;
    WorkerWait& operator=(const WorkerWait&) = delete;

private:
    void* gate_;
};

// What GET /_emulator/stats reports of the gate ("gate"): a snapshot, each figure read on its own.
struct GateStats {
    int workers = 0;                 // worker threads
    int compute = 0;                 // of them, computing at once (GateLimits::compute, resolved)
    int waiting = 0;                 // of them, in a WorkerWait now
    int busy = 0;                    // of them, answering a request now (the stats request's own included)
    std::size_t queued = 0;          // complete requests waiting for a worker
    std::size_t buffered_bytes = 0;  // answer bytes in connections' output buffers, all together
    std::uint64_t large_handed = 0;  // answers over max_output buffered for the epoll thread to send
    std::uint64_t worker_writes = 0; // answers a worker wrote itself, waiting on the socket (all buffers full)
};

class Gate {
public:
    // `direct` (optional) is offered every complete request before httplib is.
    Gate(HttpCore& core, GateLimits limits, RefusalWriter refusal, DirectHandler direct = nullptr);
    ~Gate();
    // Binds host:port (0: any); returns the port; throws std::runtime_error.
    int bind(const std::string& host, int port);
    // Serves until stop().
    void run();
    void stop();
    // Any thread.
    GateStats stats() const;

private:
    friend class WorkerWait;
    struct Impl;
    Impl* impl_;
};

// What the gate decides about the bytes buffered on a connection (exposed for the fuzz target and tests).
struct RequestScan {
    enum Kind { Incomplete, Ready, Refuse } kind = Incomplete;
    std::size_t start = 0;         // empty lines before the request line (ignored: RFC 9112, section 2.2)
    std::size_t length = 0;        // Ready: where this request ends (the empty lines, head and body)
    bool close = false;            // Ready: a Connection header lists "close" (in any case)
    bool head_complete = false;    // the head is in; only the body is missing
    bool expect_continue = false;  // Expect: 100-continue with the body missing
    int status = 0;                // Refuse: 400, 413, 414, 431
    std::string url = "/";         // Refuse: the request path if known
    std::string message;           // Refuse: why
};
// Where the scan of a chunked body got to, so that the next scan of the same (grown) buffer
// resumes there instead of reading every chunk again: reset it (= {}) when the buffer's first
// request changes. Scans of a buffer that only grows may share one.
struct ChunkProgress {
    std::size_t pos = 0;    // the next chunk-size line (0: not in a chunked body yet)
    std::size_t total = 0;  // body bytes of the chunks before it
};
RequestScan scan_request(const char* data, std::size_t size, const GateLimits& limits,
                         ChunkProgress* progress = nullptr);

// ASCII case-insensitive equality (field names, "chunked", "100-continue").
bool iequals(std::string_view a, std::string_view b);

}  // namespace vehicledata::emulator
