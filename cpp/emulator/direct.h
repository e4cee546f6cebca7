// The gate's direct path (docs/emulator.md, "Serving path"): GET and HEAD requests of the data
// endpoints and the data feed download answered without cpp-httplib parsing a head the gate has already framed.
//
// httplib 0.11's process_request reads the head again a byte at a time into its own Request and,
// after the handler, formats the response head through its multimap; for a cached answer that was
// about half of the emulator's instructions per request. parse_direct builds the same Request
// from the framed bytes, for the requests where httplib's reading of them is plain; any other
// request is declined before anything happens and goes through httplib as before. write_direct
// writes a Response exactly as httplib's write_response_core does. Byte-identical answers on both
// paths are checked by tests/emulator/test_emu_direct.py.
//
// Thread safety: no shared state.
#pragma once

#include <httplib.h>

#include <cstdint>
#include <ctime>
#include <string_view>

#include "gate.h"

namespace vehicledata::emulator {

// Builds `req` (method, target, path, version, headers) from one complete request as the gate
// framed it, as httplib 0.11 would: only a GET or HEAD with an origin-form target and at most one
// '?', HTTP/1.1 or HTTP/1.0, every line ending in CRLF, no header line over 8000 bytes or with an
// empty value, no body, Expect, Content-Length or Transfer-Encoding header, and a Range header only
// if httplib parses it (req.ranges, which the server drops as on httplib's path). Header values
// and the path are URL-decoded as httplib decodes them. req.params stays empty (the emulator parses
// the query from req.target), and so do httplib's pseudo-fields REMOTE_ADDR, REMOTE_PORT,
// LOCAL_ADDR and LOCAL_PORT (the emulator reads req.remote_addr and the ports instead, which the
// caller sets). False for any other request (`req` then unspecified).
bool parse_direct(std::string_view raw, httplib::Request& req);

// The headers both paths add last (the server's post-routing hook on httplib's path, before
// write_direct on this one): a Date of `unix_seconds` on every answer; Accept-Ranges: bytes on the
// 200 and 206 answers of a path that serves byte ranges (`byte_ranges`: the data feed download),
// GET and HEAD alike; and on a HEAD no other Accept-Ranges (httplib adds one to HEAD answers
// only), so that a HEAD carries exactly the GET's headers.
void finish_headers(const httplib::Request& req, httplib::Response& res, std::int64_t unix_seconds,
                    bool byte_ranges);

// Whether the connection closes after answering `req` by the request alone, as httplib 0.11's
// process_request decides (its `connection_closed`): "Connection: close" exactly, or HTTP/1.0
// without "Connection: Keep-Alive". (The gate also closes after a request whose Connection lists
// "close" in any case, and at end of input: it passes those as close_connection.)
bool request_closes(const httplib::Request& req);

// The connection fields of an answer, true to what the gate does after it: "Connection: close"
// when it closes the connection (`close_connection`, or request_closes(req)), else
// "Keep-Alive: timeout=T" with T the seconds the gate waits for the next request (--idle-timeout),
// and no "max": the gate keeps a connection for any number of requests. Replaces the Connection
// and Keep-Alive fields `res` has (httplib's "timeout=5, max=5", also sent on HTTP/1.0 answers
// that it then closes).
void connection_fields(const httplib::Request& req, httplib::Response& res, bool close_connection,
                       time_t idle_timeout);

// Writes `res` as httplib's write_response_core writes a routed answer without ranges (after its
// error handler has run) and the server's post-routing hook has corrected it: Content-Length,
// connection_fields (Keep-Alive with the core's keep-alive timeout), the default
// Content-Type (not httplib's Accept-Ranges on HEAD: finish_headers drops it on both paths), the
// status line and headers in one write, then the body or
// the content provider's bytes (not for HEAD). Content providers of a known length only (the data
// endpoints use no other). On a DeferringStream (the gate's) the provider, or a body over
// kPullBytes, is handed to the stream instead of written: the gate sends it as the socket drains.
// The fields it adds go into the head in the places httplib's header multimap would give them; they
// are not stored in `res` (nor are res's Connection and Keep-Alive fields dropped from it).
// False when writing failed or the provider stopped.
bool write_direct(httplib::Stream& strm, bool close_connection, const httplib::Request& req, httplib::Response& res,
                  const HttpCore& core);

}  // namespace vehicledata::emulator
