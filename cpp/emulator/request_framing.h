// The gate's HTTP/1.1 request framing: where one request in a connection's buffered bytes ends,
// and whether it breaks a limit (gate_limits.h), before anything parses it.
//
// Invariants:
// - A request is Ready only when its head and all of its body are buffered (Content-Length or the
//   whole chunked body with its trailer); only then does a worker see it, and only its bytes
//   (`length`): what follows (a pipelined request) is the next scan's.
// - Up to 64 empty lines before the request line are skipped (RFC 9112, section 2.2; `start`).
// - Refusals (the gate answers them itself and closes): 414 for a request line over 8192 bytes,
//   431 for more than max_headers fields or a head over max_header_bytes, 413 for a body over
//   max_body, 400 for a malformed line, an HTTP/1.1 request without Host, more than one Host,
//   conflicting Content-Length, Content-Length with Transfer-Encoding, a Transfer-Encoding other
//   than chunked, a malformed chunk. No request that could be read two ways passes (no smuggling).
// - A scan reads the bytes only; the same bytes give the same answer (ChunkProgress only saves
//   work on a buffer that grows).
//
// Thread safety: pure functions, any thread. A ChunkProgress belongs to one connection's buffer
// and is used by the thread that holds the connection.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "gate_limits.h"

namespace vehicledata::emulator {

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
