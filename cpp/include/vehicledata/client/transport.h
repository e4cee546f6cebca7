// HTTP transport on libcurl.
//
// Connection reuse (one share handle for connections, DNS and TLS sessions),
// HTTP/2 when the server offers it, gzip/deflate, connect and total timeouts
// (never infinite), proxy variables honoured (libcurl reads http_proxy,
// https_proxy, no_proxy), TLS verified by default.
//
// Threading: a Transport may be used from many threads at once; perform()
// borrows an easy handle from a pool.  A MultiBatch belongs to one thread.
// Transfer failures are reported in Response (curl_code/error), never thrown;
// only Interrupted is thrown, when the interrupt check asks to stop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace vehicledata::client {

struct TransportOptions {
    double connect_timeout = 10.0;  // seconds
    double timeout = 60.0;          // seconds per transfer; <= 0 is replaced by the default
    std::string user_agent;         // default "vehicledata/<version>"
    bool verify_tls = true;
    std::string ca_bundle;          // empty: system store
    std::string proxy;              // empty: environment variables
    bool http2 = true;
    // Ask for gzip/deflate bodies: 1 always, 0 never, -1 (default) unless the
    // host is the loopback interface (where compressing only costs CPU).
    int compress = -1;
    // Limits against hostile servers (see docs/client.md, "Limits").  A body
    // kept in memory (every answer except a download's 2xx body, which goes
    // to its sink) may hold at most max_body bytes on the wire and at most
    // max_decompressed bytes after gzip/deflate; nothing is reserved from a
    // claimed Content-Length.  A transfer slower than low_speed_limit bytes/s
    // for low_speed_time seconds (0: the timeout) is aborted as a timeout.
    std::int64_t max_body = 256LL << 20;
    std::int64_t max_decompressed = 256LL << 20;
    long low_speed_limit = 1024;
    double low_speed_time = 0;
};

// "scheme://host[:port]" of a URL, lower-cased ("" if it has no scheme).
std::string url_origin(const std::string& url);

// True for 127.0.0.0/8, ::1 and localhost.
bool is_loopback_url(const std::string& url);

struct Request {
    std::string method = "GET";
    std::string url;
    std::vector<std::string> headers;  // "Name: value"
    std::string body;
    // Stream the body here instead of Response::body (downloads); return
    // false to abort.  Only called for 2xx answers, with the status and the
    // Content-Range header ("" if none).
    std::function<bool(long status, const std::string& content_range, const char*, std::size_t)> sink;
    std::int64_t resume_from = 0;  // Range: bytes=N-
    std::function<void(std::int64_t done, std::int64_t total)> progress;
    double timeout = 0;            // > 0 overrides TransportOptions::timeout
};

struct Response {
    long status = 0;
    std::string body;  // capacity includes SIMDJSON_PADDING spare bytes
    std::string content_type;
    std::string retry_after;
    std::string content_range;
    std::string content_encoding;
    std::string synthetic;   // X-Emulator-Synthetic: the emulator's comma-separated synthetic fields ("" if none)
    std::int64_t content_length = -1;
    std::string url;
    int curl_code = 0;       // 0: the transfer completed
    std::string error;       // libcurl's message when curl_code != 0
    bool timed_out = false;
    std::string limit;       // the TransportOptions limit that aborted the transfer ("" if none)
    long http_version = 0;   // 2 for HTTP/2, 1 for HTTP/1.x
    double seconds = 0;
    bool transferred() const { return curl_code == 0; }
};

class Transport {
public:
    explicit Transport(TransportOptions options = {});
    ~Transport();
    Transport(const Transport&) = delete;
    Transport& operator=(const Transport&) = delete;

    // Blocking transfer.  Thread-safe.  Throws Interrupted.
    Response perform(Request& request);

    // Called about every 100 ms during transfers and waits; return true to
    // abort with Interrupted.  Set it before use; not synchronised.
    void set_interrupt_check(std::function<bool()> check) { interrupt_ = std::move(check); }
    bool interrupted() const { return interrupt_ && interrupt_(); }
    // Sleep `seconds`, waking every 100 ms to run the interrupt check.
    void sleep(double seconds) const;

    const TransportOptions& options() const { return options_; }

    struct Impl;

private:
    friend class MultiBatch;
    TransportOptions options_;
    std::function<bool()> interrupt_;
    std::unique_ptr<Impl> impl_;
};

// Several transfers at once on the libcurl multi interface (HTTP/2
// multiplexing when available).  One thread drives it; only wakeup() may be
// called from another thread.
class MultiBatch {
public:
    explicit MultiBatch(Transport& transport);
    ~MultiBatch();
    MultiBatch(const MultiBatch&) = delete;
    MultiBatch& operator=(const MultiBatch&) = delete;

    // Start a transfer; `id` comes back with its response.
    void add(std::size_t id, Request request);
    // Drive transfers for up to timeout_ms (at most 100 ms; wakeup() ends the
    // wait early); returns those that finished.  Throws Interrupted.
    std::vector<std::pair<std::size_t, Response>> poll(int timeout_ms);
    // Remove the transfer `id` at once (its connection is closed if it was
    // mid-answer); nothing comes back for it.  False if it is not running.
    bool cancel(std::size_t id);
    // End a poll() waiting on another thread (curl_multi_wakeup).  Thread-safe.
    void wakeup();
    std::size_t running() const { return active_.size(); }

private:
    friend class Transport;
    struct Transfer;
    Transport& transport_;
    void* multi_;
    std::vector<std::unique_ptr<Transfer>> active_;
    // Body bytes held by the transfers in flight together: past max_body the
    // transfer that crosses it ends with limit "max_body" (a bound in total,
    // not per answer: max_parallel answers of max_body each would be several).
    std::int64_t inflight_bytes_ = 0;
};

}  // namespace vehicledata::client
