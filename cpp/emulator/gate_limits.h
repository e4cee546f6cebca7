// The gate's limits (gate.h), read by every room of the serving path: the framer
// (request_framing.h: header and body bounds), the connection stream (conn_stream.h: output
// bounds, the write deadline), the worker turns (worker_turns.h: threads, compute) and the gate
// itself (connections, timeouts).
//
// Thread safety: a plain value; each room keeps its own copy or a const reference to the gate's,
// which is not changed after the gate is built.
#pragma once

#include <cstddef>

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

}  // namespace vehicledata::emulator
