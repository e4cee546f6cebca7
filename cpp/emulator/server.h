// The emulator's HTTP server: the gate (gate.h: accept loop, request framing and
// limits) feeding complete requests to cpp-httplib, every request dispatched by
// one pre-routing hook (control plane, faults, maintenance,
// routing, rate limits, usage counters, then the Api).
//
// Thread safety: construct, bind() and run() on one thread; stop() may be
// called from any other thread (e.g. a signal-waiting thread).
#pragma once

#include <httplib.h>

#include <atomic>
#include <memory>
#include <string>
#include <string_view>

#include "auth.h"
#include "faults.h"
#include "gate.h"
#include "rate_limiter.h"
#include "options.h"
#include "api.h"
#include "response_cache.h"
#include "routes.h"
#include "store.h"
#include "usage.h"

namespace vehicledata::emulator {

class Server {
public:
    // Opens the database and accounts; throws StoreError / std::runtime_error.
    explicit Server(Options options);
    ~Server();
    // Binds the listening socket; returns the port, throws std::runtime_error on failure.
    int bind();
    // "http://HOST:PORT" after bind().
    std::string url() const;
    // Serves until stop().
    void run();
    void stop();

private:
    // What the direct path has already worked out of a request, for serve() not to work it out again.
    struct Known {
        const Route* route = nullptr;  // its route (match_route of its path)
        Identity* identity = nullptr;  // its caller (Auth::identify of its Authorization; serve_quick's),
                                       // moved into the Call
    };
    void dispatch(const httplib::Request& req, httplib::Response& res, const Known& known);
    // The gate's direct path (direct.h); false to leave the request to httplib.
    bool serve_direct(std::string_view raw, httplib::Stream& strm, bool close_connection, bool& connection_closed);
    // The gate's reactor's own answers (Gate::set_quick): serve_direct for a response-cache hit
    // that needs no wait (quiet, no faults, not in maintenance; on several cores, bodies up to
    // kPullBytes), else false, having done nothing.
    bool serve_quick(std::string_view raw, httplib::Stream& strm, bool close_connection, bool& connection_closed);
    // serve_direct's answer to a parsed request of a direct route; `identity`: its caller when
    // already identified (serve_quick), taken, so that a JWT is verified once per request.
    void answer_direct(httplib::Request& req, const Route& route, httplib::Stream& strm, bool close_connection,
                       bool& connection_closed, Identity* identity = nullptr);
    // httplib's error handler: the service's error body for an answer of status >= 400 without one.
    void answer_error(const httplib::Request& req, httplib::Response& res);
    // A request past the control plane, as a chain of stages (server.cpp: serve() calls them in
    // order; each answers, returning true, or passes to the next). The stages are inline, defined
    // in server.cpp, their only user.
    struct Serving;
    void serve(const httplib::Request& req, httplib::Response& res, const Known& known);
    inline bool inject_fault(Serving& s);        // the control plane's injected fault for this path
    inline bool refuse_maintenance(Serving& s);  // 503 in maintenance
    inline bool refuse_unrouted(Serving& s);     // 404: no route
    inline bool refuse_method(Serving& s);       // 405 with Allow
    inline bool refuse_deprecated(Serving& s);   // 403 for a deprecated path (--deprecated-403)
    inline bool build_call(Serving& s);          // the Call (a malformed query string: 400)
    inline bool limit_rate(Serving& s);          // 429 past the rate limits; counts the account's usage
    inline bool answer_cached(Serving& s);       // a response-cache hit
    inline bool render(Serving& s);              // the handlers' answer (kept in the response cache when it may be)
    inline void truncate_body(Serving& s);       // a truncating fault: half the body
    // The control plane's guard: loopback clients only, or the --control-token header.
    bool control_allowed(const httplib::Request& req, std::string& why) const;
    void apply_fault(const Fault& f, const httplib::Request& req, httplib::Response& res, bool text);
    // Answers from a response-cache entry (or one just rendered): its headers, the coding the
    // request offers (a compressed variant is cached under its own key), the body sent from the
    // shared entry without a copy.
    void send_cached(const httplib::Request& req, httplib::Response& res, const std::string& key,
                     std::shared_ptr<const CachedResponse> entry);

    Options options_;
    Clock clock_;
    std::unique_ptr<Store> store_;
    std::unique_ptr<Auth> auth_;
    RateLimiter limiter_;
    RateLimiter login_limiter_;
    UsageCounters usage_;
    Faults faults_;
    Stats stats_;
    std::atomic<bool> maintenance_{false};
    std::unique_ptr<Api> api_;
    ResponseCache response_cache_;
    HttpCore http_;
    std::unique_ptr<Gate> gate_;
    int port_ = -1;
};

// 403 DeprecatedException for a deprecated path (--deprecated-403), as the live service answers.
void write_deprecated(httplib::Response& res, const schema::Endpoint& endpoint);
// Writes an error answer: JSON {exception, code, url, message}, or the message
// as text/plain when `text`.
void write_error(httplib::Response& res, int status, const std::string& exception, const std::string& url,
                 const std::string& message, bool text);

}  // namespace vehicledata::emulator
