// The emulator's connection handling in front of cpp-httplib ("the gate"): the piece that wires
// the serving rooms (docs/architecture.md, "The serving rooms").
//
// cpp-httplib 0.11 (Debian) gives each connection a worker thread for as long as it is open and
// has no whole-request deadline, header-count limit or connection cap, so a few slow or hostile
// clients starve everyone else (docs/reliability.md). The gate owns the listening socket instead.
// Its rooms, each with its own invariants and thread rules:
//   reactor.h          readiness only: the epoll set and the wake-up descriptor;
//   request_framing.h  where one request ends in the buffered bytes, and which limits it breaks;
//   worker_turns.h     the queues of complete requests and the turns of the cores (WorkerWait);
//   conn_stream.h      a connection's bytes in and out, httplib's stream over one request, the
//                      deferred bodies of the direct path.
// What the gate itself keeps (gate.cpp):
// - One thread (run()) accepts connections (at most `max_connections` open; more wait in the
//   listen backlog; one address at most its share, else 503 and closed), reads each request until
//   request_framing says it is complete, and answers a refusal itself (JSON error body, then it
//   drains the input for a moment and closes). A request not complete within request_timeout_ms
//   is a 408; an idle kept connection is closed after idle_timeout_ms.
// - Only a complete request reaches a worker thread, which hands exactly those bytes to the
//   direct path or to httplib's request processing; bytes after it (a pipelined request) stay
//   buffered for the next round, and a body nobody reads (a GET's Content-Length) is discarded
//   with its request. At end of input the last complete request is answered with Connection:
//   close.
// - What the worker's answer leaves unsent, the reactor thread sends as the socket drains
//   (reading nothing more from that connection meanwhile), within write_timeout_ms.
// - After a response a worker waits (at most 2 ms, at most half the workers at once) for its kept
//   connection's next request, which it then answers itself if a turn is free and otherwise
//   queues, without a trip through the reactor.
// - A connection belongs to the reactor thread while it is not `busy`, to one worker while it is.
//
// Thread safety: bind() and run() on one thread; stop() and stats() from any thread.
#pragma once

#include <httplib.h>

#include "conn_stream.h"
#include "gate_limits.h"
#include "httplib_adapter.h"
#include "request_framing.h"
#include "worker_turns.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace vehicledata::emulator {

// The server's own answer to one complete request, bypassing httplib's parsing (direct.h):
// `request` is its bytes as the gate framed them. Returns false, having done nothing, to leave the
// request to httplib's processing; true once answered, with `connection_closed` set as httplib's
// process_request would set it.
using DirectHandler = std::function<bool(std::string_view request, httplib::Stream& strm, bool close_connection,
                                         bool& connection_closed)>;

// Builds a gate refusal: status, exception and message; `url` is the request path or "/".
using RefusalWriter = std::function<std::string(int status, const std::string& url, const std::string& message)>;

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
    std::uint64_t quick = 0;         // answers the reactor thread gave itself (set_quick), no worker involved
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
    // Before run(). `quick` is offered a complete request on the reactor thread first, while the
    // connections' output buffers have room for a whole connection's share: it answers only what
    // it can without waiting on anything (a response-cache hit, as nginx's event loop answers a
    // file), else returns false having done nothing and the request goes to a worker as before.
    // It saves the hand-over to a worker and back (two thread wake-ups per request).
    void set_quick(DirectHandler quick);

private:
    struct Impl;
    Impl* impl_;
};

}  // namespace vehicledata::emulator
