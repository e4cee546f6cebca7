// The emulator's HTTP server and its request pipeline.
#include "server.h"

#include <openssl/rand.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <thread>

#include "compress.h"
#include "control.h"
#include "direct.h"
#include "http_date.h"
#include "httplib_adapter.h"
#include "vehicledata/envelope.h"
#include "vehicledata/jwt.h"

namespace vehicledata::emulator {

namespace {

std::string random_secret() {
    unsigned char b[32];
    if (RAND_bytes(b, sizeof b) != 1) throw std::runtime_error("RAND_bytes failed");
    return jwt::base64url_encode(std::string_view(reinterpret_cast<const char*>(b), sizeof b));
}

std::string rate_message(int limit) {
    return std::string(envelope::kTooManyRequests) + " - Max Per Minute: " + std::to_string(limit) +
           " (note: daily rate limits may apply, see your subscription plans details)";
}

std::string raw_path(const httplib::Request& req) {
    const std::string& t = req.target;
    auto q = t.find('?');
    return q == std::string::npos ? t : t.substr(0, q);
}

// cpp-httplib applies a request's Range to whatever answer it gets (JSON pages,
// even error bodies, with an impossible Content-Range past the end).  The
// emulator answers Range itself on the data feed download (feed_download) and
// ignores it elsewhere, as the service does, so the parsed ranges are dropped.
// The Request is httplib's own non-const object, passed to handlers as const.
void ignore_ranges(const httplib::Request& req) { drop_ranges(req); }

constexpr std::size_t kMaxBody = 1 << 20;  // request bodies over this are a 413

// Methods cpp-httplib parses; it refuses any other with 400 before routing.
bool known_method(const std::string& m) {
    return m == "GET" || m == "HEAD" || m == "POST" || m == "PUT" || m == "DELETE" || m == "CONNECT" ||
           m == "OPTIONS" || m == "TRACE" || m == "PATCH" || m == "PRI";
}

// A request line httplib refused only for its method: a method token it does not
// know (FOO) and an origin-form target.  Anything else stays a 400.
bool unknown_method_line(const httplib::Request& req) {
    if (req.method.empty() || req.method.size() > 32 || known_method(req.method)) return false;
    for (char c : req.method)
        if (c < 'A' || c > 'Z') return false;
    return !req.target.empty() && req.target.front() == '/';
}

std::string method_message(const std::string& method, const std::string& url, const char* allowed) {
    return "Method Not Allowed: " + method + " is not valid for " + url + " (use " + allowed + ")";
}

const char* reason_for(int status) {
    switch (status) {
        case 400: return "Bad Request";
        case 404: return "Not Found";
        case 405: return "Method Not Allowed";
        case 408: return "Request Timeout";
        case 413: return "Payload Too Large";
        case 414: return "URI Too Long";
        case 416: return "Range Not Satisfiable: malformed Range header";
        case 431: return "Request Header Fields Too Large";
        case 500: return "Internal Server Error";
        default: return "Error";
    }
}

// A whole response for a request the gate refuses before httplib sees it.
std::string gate_refusal(int status, const std::string& url, const std::string& message, std::int64_t now) {
    std::string path;
    if (!format::url_decode(url, path, false)) path = url;
    const std::optional<Route> route = match_route(path);
    const bool text = route && route->text_errors;  // login and data feed download: text/plain, as elsewhere
    httplib::Response res;
    write_error(res, status, envelope::exception_for(status), url, message, text);
    std::string reason = reason_for(status);
    reason = reason.substr(0, reason.find(':'));
    const std::string type = text ? res.get_header_value("Content-Type") : "application/json; charset=UTF-8";
    return "HTTP/1.1 " + std::to_string(status) + " " + reason + "\r\nContent-Type: " + type +
           "\r\nContent-Length: " + std::to_string(res.body.size()) +
           "\r\nConnection: close\r\nDate: " + http_date(now) + "\r\n\r\n" + res.body;
}

bool loopback(const std::string& ip) {
    return ip.rfind("127.", 0) == 0 || ip == "::1" || ip.rfind("::ffff:127.", 0) == 0;
}

// Compares without an early exit, so the time taken does not tell how much of the token matched.
bool same_secret(const std::string& a, const std::string& b) {
    if (a.size() != b.size() || b.empty()) return false;
    unsigned char diff = 0;
    for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
    return diff == 0;
}

// The endpoints whose 200 answers are a function of the request target and the caller's access
// tier only (response_cache.h); logins, account usage and the data feed are not.
bool cacheable_kind(schema::Kind k) {
    using schema::Kind;
    return k == Kind::Search || k == Kind::Years || k == Kind::Attributes || k == Kind::Detail || k == Kind::Vin;
}

// The response cache's key of a call: the access tier (a demo caller never gets a full-access
// body), the current UTC year for the VIN decoder (model years are decoded relative to it), and
// the request target as sent.
std::string cache_key(const Call& call, const std::string& target) {
    std::string key;
    key.reserve(target.size() + 8);
    key.push_back(full_access(call) ? 'F' : 'D');
    if (call.route->kind == schema::Kind::Vin) {
        const std::time_t now = std::time(nullptr);
        std::tm tm{};
        gmtime_r(&now, &tm);
        format::append_int(key, tm.tm_year + 1900);
    }
    key.push_back(' ');
    key.append(target);
    return key;
}

// httplib's exception handler: a 500 with the service's error body.
void answer_exception(const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "internal error";
    try {
        if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
        what = e.what();
    } catch (...) {
    }
    write_error(res, 500, envelope::kInternalError, raw_path(req), what, false);
}

// httplib's logger (--log): one line per request on stderr.
void log_request(const httplib::Request& req, const httplib::Response& res) {
    std::fprintf(stderr, "%s %s %d\n", req.method.c_str(), req.target.c_str(), res.status);
}

}  // namespace

void write_error(httplib::Response& res, int status, const std::string& exception, const std::string& url,
                 const std::string& message, bool text) {
    const envelope::ErrorBody e{exception, status, url, message};
    res.status = status;
    if (text) {
        res.body = envelope::error_text(e);
        res.set_header("Content-Type", "text/plain; charset=UTF-8");
        return;
    }
    res.body = envelope::error_json(e);
    res.set_header("Content-Type", "application/json");
}

// The body the live service was seen to send for a deprecated endpoint (docs/emulator.md), naming
// the endpoint that replaces it (schema::Endpoint::replaced_by, e.g. "/api/trims/v2/{id}").
void write_deprecated(httplib::Response& res, const schema::Endpoint& endpoint) {
    res.status = 403;
    res.body = envelope::deprecated_json(envelope::ErrorBody{
        envelope::kDeprecated, 403, "", "This endpoint is being deprecated. Use " + endpoint.replaced_by + " instead."});
    res.set_header("Content-Type", "application/json");
}

Server::Server(Options options)
    : options_(std::move(options)),
      limiter_(static_cast<std::int64_t>(options_.window_seconds) * 1000),
      login_limiter_(static_cast<std::int64_t>(options_.window_seconds) * 1000),
      response_cache_(static_cast<std::size_t>(options_.response_cache_mb) << 20) {
    store_ = std::make_unique<Store>(options_.db.empty() ? default_database_path() : options_.db);
    auto accounts = options_.accounts_file.empty() ? default_accounts() : load_accounts(options_.accounts_file);
    auth_ = std::make_unique<Auth>(std::move(accounts),
                                   options_.jwt_secret.empty() ? random_secret() : options_.jwt_secret,
                                   options_.token_ttl, clock_);
    api_ = std::make_unique<Api>(*store_, *auth_, usage_, clock_);
    maintenance_ = options_.maintenance;

    GateLimits limits;
    limits.threads = options_.threads;
    limits.compute = options_.compute_workers;
    limits.max_connections = options_.max_connections;
    limits.max_headers = static_cast<std::size_t>(options_.max_headers);
    limits.max_header_bytes = static_cast<std::size_t>(options_.max_header_bytes);
    limits.max_body = kMaxBody;
    limits.request_timeout_ms = options_.request_timeout * 1000;
    limits.idle_timeout_ms = options_.idle_timeout * 1000;
    limits.write_timeout_ms = options_.write_timeout * 1000;
    limits.max_per_address = options_.max_per_address;
    auto refusal = [this](int status, const std::string& url, const std::string& message) {
        return gate_refusal(status, url, message, clock_.now_seconds());
    };
    gate_ = std::make_unique<Gate>(http_, limits, refusal,
                                   [this](std::string_view raw, httplib::Stream& strm, bool close, bool& closed) {
                                       return serve_direct(raw, strm, close, closed);
                                   });
    gate_->set_quick([this](std::string_view raw, httplib::Stream& strm, bool close, bool& closed) {
            return serve_quick(raw, strm, close, closed);
        });
    http_.set_payload_max_length(kMaxBody);
    // Requests are answered in the pre-routing hook, before httplib reads a body
    // or matches routes, unless they carry a body (Content-Length or
    // Transfer-Encoding on a method that may have one): those fall through to
    // the catch-all handlers below, which see the body.  A POST without either
    // header has an empty body (RFC 9112, section 6.3) and is answered at once
    // (httplib would otherwise read until the read timeout).  Methods httplib
    // has no handlers for (TRACE, CONNECT) get the service's 405 here.
    http_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
        if (req.method != "GET" && req.method != "HEAD" &&
            (req.has_header("Content-Length") || req.has_header("Transfer-Encoding")) &&
            (req.method == "POST" || req.method == "PUT" || req.method == "PATCH" || req.method == "DELETE" ||
             req.method == "OPTIONS"))
            return httplib::Server::HandlerResponse::Unhandled;
        dispatch(req, res, Known{});
        return httplib::Server::HandlerResponse::Handled;
    });
    auto any = [this](const httplib::Request& req, httplib::Response& res) { dispatch(req, res, Known{}); };
    http_.Post(".*", any);
    http_.Put(".*", any);
    http_.Patch(".*", any);
    http_.Delete(".*", any);
    http_.Options(".*", any);
    http_.set_exception_handler(answer_exception);
    // Last before httplib writes the status line and headers (after its error handler and its own
    // headers): every answer gets a Date, and a HEAD answer drops the Accept-Ranges httplib adds
    // to HEAD only, so it carries exactly the headers of the GET (the direct path does the same).
    // The connection fields are made true there too: httplib announces "Keep-Alive: timeout=5,
    // max=5" even on the HTTP/1.0 answers it closes, while the gate keeps a connection for any
    // number of requests, for --idle-timeout seconds between them (direct.h, connection_fields;
    // httplib has set "Connection: close" where the gate passed close_connection).
    http_.set_keep_alive_timeout(options_.idle_timeout);
    http_.set_post_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
        connection_fields(req, res, res.get_header_value("Connection") == "close", http_.keep_alive_timeout());
        const std::optional<Route> route = match_route(req.path);
        finish_headers(req, res, clock_.now_seconds(), route && route->kind == schema::Kind::FeedDownload);
    });
    // Errors httplib answers itself (a bad request line or an unknown method, a
    // body over the maximum, a request line over 8 KiB, a malformed Range) get
    // the service's error body too: text/plain on the login and data feed
    // routes, JSON elsewhere.
    http_.set_error_handler([this](const httplib::Request& req, httplib::Response& res) { answer_error(req, res); });
    if (!options_.quiet) {
        http_.set_logger(log_request);
    }
}

Server::~Server() { stop(); }

int Server::bind() {
    port_ = gate_->bind(options_.host, options_.port);
    return port_;
}

std::string Server::url() const {
    std::string host = options_.host;
    if (host.find(':') != std::string::npos) host = "[" + host + "]";
    return "http://" + host + ":" + std::to_string(port_);
}

void Server::run() { gate_->run(); }

void Server::stop() { gate_->stop(); }

void Server::answer_error(const httplib::Request& req, httplib::Response& res) {
    ignore_ranges(req);
    if (!res.body.empty() || chunked_provider(res) || provider_length(res) > 0) return;
    std::string url = raw_path(req);
    if (url.empty()) url = "/";  // e.g. 414: httplib keeps nothing of a request line it refused
    std::string path;
    if (!format::url_decode(url, path, false)) path = url;
    const std::optional<Route> route = match_route(path);
    const bool text = route && route->text_errors;
    int status = res.status;
    std::string message = reason_for(status);
    if (status == 400 && unknown_method_line(req)) {
        // A method httplib does not parse (FOO): 405 on a known path, 404 elsewhere, as in serve().
        if (route) {
            status = 405;
            message = method_message(req.method, url, route->method);
            res.set_header("Allow", allow_header(route->method));
        } else {
            status = 404;
            message = "Not Found";
        }
    } else if (status == 413) {
        message = "Payload Too Large: the body is over " + std::to_string(kMaxBody) + " bytes";
    } else if (status == 414) {
        message = "URI Too Long: the request line is over 8192 bytes";
    } else if (status == 416) {
        message += " '" + req.get_header_value("Range") + "'";
        const std::size_t size = route && route->kind == schema::Kind::FeedDownload ? api_->feed_size() : 0;
        if (size > 0)
            res.set_header("Content-Range", "bytes */" + std::to_string(size));
    }
    write_error(res, status, envelope::exception_for(status), url, message, text);
    compress_response(req, res);  // the one compression rule (and the JSON charset) on this path too
}

// The direct path (direct.h): what httplib's process_request does for a request it routes to the
// pre-routing hook, from the Request the gate's bytes give, on the data endpoints only.
bool Server::serve_direct(std::string_view raw, httplib::Stream& strm, bool close_connection,
                          bool& connection_closed) {
    httplib::Request req;
    if (!parse_direct(raw, req)) return false;
    const std::optional<Route> route = match_route(req.path);
    if (!route || !(cacheable_kind(route->kind) || route->kind == schema::Kind::FeedDownload)) return false;
    answer_direct(req, *route, strm, close_connection, connection_closed);
    return true;
}

namespace {
// Set while the gate's reactor thread answers a request itself (serve_quick): that request takes
// no fault (serve_quick declines while there are any; one added meanwhile waits for the next
// request), so the reactor never sleeps a delay.
thread_local bool t_on_reactor = false;
}  // namespace

bool Server::serve_quick(std::string_view raw, httplib::Stream& strm, bool close_connection,
                         bool& connection_closed) {
    // Only what the reactor can answer without waiting: no log line to write, no fault to apply,
    // a response-cache hit.
    if (!options_.quiet || !response_cache_.enabled() || faults_.size() > 0 || maintenance_.load()) return false;
    httplib::Request req;
    if (!parse_direct(raw, req)) return false;
    const std::optional<Route> route = match_route(req.path);
    if (!route || !cacheable_kind(route->kind) || route->kind == schema::Kind::Vin) return false;
    if (req.method != route->method && !(req.method == "HEAD" && std::string(route->method) == "GET")) return false;
    Call call;
    call.route = &*route;
    call.identity = auth_->identify(first_header(req.headers, "Authorization"));
    const auto hit = response_cache_.find(cache_key(call, req.target), store_->data_generation(), false);
    // A large body on a machine of several cores goes to the workers: the reactor is one thread,
    // the workers spread over the cores.
    static const bool one_core = default_compute() <= 2;
    if (!hit || (!one_core && hit->body.size() > kPullBytes)) return false;
    t_on_reactor = true;
    answer_direct(req, *route, strm, close_connection, connection_closed, &call.identity);
    t_on_reactor = false;
    return true;
}

void Server::answer_direct(httplib::Request& req, const Route& route, httplib::Stream& strm, bool close_connection,
                           bool& connection_closed, Identity* identity) {
    if (request_closes(req)) connection_closed = true;  // (any case of "close": the gate's close_connection)
    strm.get_remote_ip_and_port(req.remote_addr, req.remote_port);
    strm.get_local_ip_and_port(req.local_addr, req.local_port);
    httplib::Response res;
    res.version = "HTTP/1.1";
    try {
        dispatch(req, res, Known{&route, identity});
    } catch (...) {
        answer_exception(req, res, std::current_exception());
    }
    if (res.status == -1) res.status = 200;
    if (res.status >= 400) answer_error(req, res);
    finish_headers(req, res, clock_.now_seconds(), route.kind == schema::Kind::FeedDownload);
    write_direct(strm, close_connection, req, res, http_);
    if (!options_.quiet) log_request(req, res);
}

bool Server::control_allowed(const httplib::Request& req, std::string& why) const {
    if (!options_.control_token.empty()) {
        if (same_secret(req.get_header_value("X-Emulator-Token"), options_.control_token)) return true;
        why = "Forbidden: the control plane needs the X-Emulator-Token header (--control-token)";
        return false;
    }
    if (loopback(req.remote_addr)) return true;
    why = "Forbidden: the control plane answers loopback clients only (start with --control-token to open it)";
    return false;
}

void Server::dispatch(const httplib::Request& req, httplib::Response& res, const Known& known) {
    ignore_ranges(req);
    const std::string& path = req.path;
    if (path.rfind("/_emulator/", 0) == 0 || path == "/_emulator") {
        if (std::string why; !control_allowed(req, why)) {
            write_error(res, 403, envelope::kForbidden, path, why, false);
            return;
        }
        ControlState state{clock_,  *store_, limiter_,     login_limiter_, usage_,
                           faults_, stats_,  maintenance_, response_cache_, *gate_};
        control(state, req, res);
        // reset, clock, faults, maintenance, touch: whatever a change did, no cached answer outlives it.
        if (req.method != "GET" && req.method != "HEAD") response_cache_.clear();
        return;
    }
    serve(req, res, known);
    compress_response(req, res);
    stats_.record(path, res.status < 0 ? 200 : res.status);
}

void Server::apply_fault(const Fault& f, const httplib::Request& req, httplib::Response& res, bool text) {
    if (f.body) {
        res.status = f.status;
        res.body = *f.body;
        const bool json = !f.body->empty() && (f.body->front() == '{' || f.body->front() == '[');
        res.set_header("Content-Type", json ? "application/json" : "text/plain; charset=UTF-8");
    } else {
        std::string message = f.status == 429 ? rate_message(options_.rate_limit)
                                               : "Fault injected by the emulator's control plane";
        write_error(res, f.status, envelope::exception_for(f.status), raw_path(req), message, text);
    }
    if (f.retry_after >= 0) res.set_header("Retry-After", std::to_string(f.retry_after));
}

// One request on its way through serve()'s stages: what the earlier stages found, for the later.
struct Server::Serving {
    const httplib::Request& req;
    httplib::Response& res;
    std::optional<Route> route;
    bool text = false;      // this route's errors are text/plain
    bool truncate = false;  // a truncating fault: the full length declared, half the body sent
    Call call;
    bool cacheable = false;  // the answer may come from (and go to) the response cache
    std::string key;         // its key there
    std::uint64_t generation = 0;  // the data generation it was looked up at
    Identity* identity = nullptr;  // the caller, when the direct path has identified it (Known)
};

// The stages of a request past the control plane, in their order: each answers (true: the request
// is done) or passes to the next.
void Server::serve(const httplib::Request& req, httplib::Response& res, const Known& known) {
    Serving s{req, res, known.route ? std::optional<Route>(*known.route) : match_route(req.path)};
    s.identity = known.identity;
    s.text = s.route && s.route->text_errors;
    if (inject_fault(s)) return;        // control plane's faults: delay, status, drop (truncate: later)
    if (refuse_maintenance(s)) return;  // 503 while in maintenance
    if (refuse_unrouted(s)) return;     // 404
    if (refuse_method(s)) return;       // 405 with Allow
    if (refuse_deprecated(s)) return;   // 403 with --deprecated-403
    if (build_call(s)) return;          // the Call: target, params (400 when malformed), identity
    if (limit_rate(s)) return;          // 429: logins per address, the rest per account or address
    if (answer_cached(s)) return;       // a response-cache hit
    if (render(s)) return;              // the handler's answer (cached when it may be)
    truncate_body(s);                   // a truncating fault's half body
}

inline bool Server::inject_fault(Serving& s) {
    if (t_on_reactor) return false;  // (serve_quick)
    auto f = faults_.take(s.req.path);
    if (!f) return false;
    if (f->delay_ms > 0) {
        const WorkerWait waiting;  // a sleeping request leaves its turn of the cores to others
        std::this_thread::sleep_for(std::chrono::milliseconds(f->delay_ms));
    }
    switch (f->action) {
        case FaultAction::Status:
            apply_fault(*f, s.req, s.res, s.text);
            return true;
        case FaultAction::Drop:
            drop_connection(s.req);
            s.res.status = 499;
            return true;
        case FaultAction::Truncate:
            s.truncate = true;
            break;
        case FaultAction::Delay:
            break;
    }
    return false;
}

inline bool Server::refuse_maintenance(Serving& s) {
    if (!maintenance_.load()) return false;
    write_error(s.res, 503, envelope::kServiceUnavailable, raw_path(s.req),
                "Service Unavailable: scheduled maintenance, please retry later", s.text);
    s.res.set_header("Retry-After", "60");
    return true;
}

inline bool Server::refuse_unrouted(Serving& s) {
    if (s.route) return false;
    write_error(s.res, 404, envelope::kNotFound, raw_path(s.req), "Not Found", false);
    return true;
}

inline bool Server::refuse_method(Serving& s) {
    const Route& route = *s.route;
    const httplib::Request& req = s.req;
    if (req.method == route.method || (req.method == "HEAD" && std::string(route.method) == "GET")) return false;
    write_error(s.res, 405, envelope::kMethodNotAllowed, raw_path(req),
                method_message(req.method, raw_path(req), route.method), s.text);
    s.res.set_header("Allow", allow_header(route.method));
    return true;
}

inline bool Server::refuse_deprecated(Serving& s) {
    if (!(options_.deprecated_403 && s.route->endpoint && s.route->endpoint->deprecated)) return false;
    write_deprecated(s.res, *s.route->endpoint);
    return true;
}

inline bool Server::build_call(Serving& s) {
    const httplib::Request& req = s.req;
    Call& call = s.call;
    call.route = &*s.route;
    call.target = req.target;
    call.path = req.path;
    call.body = req.body;
    call.remote_addr = req.remote_addr;
    if (s.route->kind == schema::Kind::FeedDownload) {
        if (auto it = req.headers.find("Range"); it != req.headers.end()) call.range = it->second;
        if (auto it = req.headers.find("If-Range"); it != req.headers.end()) call.if_range = it->second;
    }
    try {
        auto q = req.target.find('?');
        if (q != std::string::npos)
            call.params = dedupe_params(format::parse_query(std::string_view(req.target).substr(q + 1)));
    } catch (const format::QueryStringError& e) {
        write_error(s.res, 400, envelope::kBadRequest, raw_path(req), e.message, s.text);
        return true;
    }
    call.identity = s.identity ? std::move(*s.identity) : auth_->identify(req.get_header_value("Authorization"));
    return false;
}

inline bool Server::limit_rate(Serving& s) {
    const httplib::Request& req = s.req;
    int retry_after = 1;
    const std::int64_t now_ms = clock_.now_ms();
    if (s.route->kind == schema::Kind::Login) {
        if (!login_limiter_.hit("ip:" + req.remote_addr, options_.login_rate_limit, now_ms, retry_after)) {
            write_error(s.res, 429, envelope::kTooManyRequests, raw_path(req), rate_message(options_.login_rate_limit),
                        true);
            s.res.set_header("Retry-After", std::to_string(retry_after));
            return true;
        }
        return false;
    }
    const Identity& identity = s.call.identity;
    const std::string key = identity.valid ? "acct:" + identity.account_id : "ip:" + req.remote_addr;
    if (!limiter_.hit(key, options_.rate_limit, now_ms, retry_after)) {
        write_error(s.res, 429, envelope::kTooManyRequests, raw_path(req), rate_message(options_.rate_limit), s.text);
        s.res.set_header("Retry-After", std::to_string(retry_after));
        return true;
    }
    if (identity.valid) usage_.count(identity.account_id, now_ms / 1000);
    return false;
}

// The response cache (response_cache.h): after every per-request check above, in place of the
// handler. A truncating fault bypasses it.
inline bool Server::answer_cached(Serving& s) {
    store_->release_retired();  // no Statement of this thread is alive here (also on a hit: as before)
    s.cacheable = !s.truncate && response_cache_.enabled() && cacheable_kind(s.route->kind);
    if (!s.cacheable) return false;
    s.key = cache_key(s.call, s.req.target);
    s.generation = store_->data_generation();  // before rendering: a change meanwhile makes the entry stale
    auto hit = response_cache_.find(s.key, s.generation);
    if (!hit) return false;
    send_cached(s.req, s.res, s.key, std::move(hit));
    return true;
}

inline bool Server::render(Serving& s) {
    httplib::Response& res = s.res;
    try {
        api_->handle(s.call, res);
        if (s.cacheable && res.status == 200 && provider_length(res) == 0 && !chunked_provider(res)) {
            auto entry = std::make_shared<CachedResponse>();
            entry->body = std::move(res.body);
            entry->headers = std::move(res.headers);
            entry->generation = s.generation;
            res.body.clear();
            res.headers.clear();
            response_cache_.put(s.key, entry);
            send_cached(s.req, res, s.key, std::move(entry));
            return true;
        }
    } catch (const HttpError& e) {
        write_error(res, e.status, e.exception, raw_path(s.req), e.message, s.text);
    } catch (const std::exception& e) {
        write_error(res, 500, envelope::kInternalError, raw_path(s.req), e.what(), s.text);
    }
    return false;
}

inline void Server::truncate_body(Serving& s) {
    httplib::Response& res = s.res;
    if (!s.truncate || res.status != 200) return;
    // Declare the full length, send half of it, then close the connection.
    auto body = std::make_shared<std::string>(std::move(res.body));
    res.body.clear();
    std::string type = res.get_header_value("Content-Type");
    if (!body->empty()) {
        res.set_content_provider(body->size(), type, [body](std::size_t offset, std::size_t, httplib::DataSink& sink) {
            const std::size_t half = body->size() / 2;
            if (offset >= half) return false;
            sink.write(body->data() + offset, half - offset);
            return true;
        });
    }
}

void Server::send_cached(const httplib::Request& req, httplib::Response& res, const std::string& key,
                         std::shared_ptr<const CachedResponse> entry) {
    res.status = 200;
    // The entry's headers but its Content-Type, which set_content_provider sets again (one pass over
    // the ordered fields, each appended at the end: the same map as a copy and an erase).
    res.headers.clear();
    std::string type;
    bool typed = false;
    for (const auto& field : entry->headers) {
        if (!header_equal(field.first, "Content-Type")) {
            res.headers.emplace_hint(res.headers.end(), field);
        } else if (!typed) {
            type = field.second.c_str();  // the first, as get_header_value
            typed = true;
        }
    }
    std::shared_ptr<const CachedResponse> send = entry;
    // The compression rule (compress.h), applied here because the body is not in res.body.
    if (const Coding coding = coding_for(first_header(req.headers, "Accept-Encoding"), type, entry->body.size());
        coding != Coding::Identity) {
        const std::string packed_key = (coding == Coding::Gzip ? "gzip:" : "deflate:") + key;
        auto packed = response_cache_.find(packed_key, entry->generation, false);
        if (!packed) {
            auto p = std::make_shared<CachedResponse>();
            p->generation = entry->generation;
            if (compress_body(entry->body, coding, p->body)) {
                response_cache_.put(packed_key, p);
                packed = std::move(p);
            }
        }
        if (packed) {
            send = std::move(packed);
            res.set_header("Content-Encoding", coding == Coding::Gzip ? "gzip" : "deflate");
        }
    }
    if (send->body.empty()) {
        res.set_header("Content-Type", type);
        return;
    }
    res.set_content_provider(send->body.size(), type,
                             [send](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
                                 return sink.write(send->body.data() + offset, length);
                             });
}

}  // namespace vehicledata::emulator
