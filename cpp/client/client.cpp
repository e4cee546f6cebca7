// The client core: see vehicledata/client/client.h.
#include "vehicledata/client/client.h"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <deque>
#include <map>
#include <optional>
#include <sstream>
#include <sys/stat.h>

#include "vehicledata/client/errors.h"
#include "vehicledata/client/page_scheduler.h"
#include "vehicledata/client/paging.h"
#include "vehicledata/envelope.h"
#include "vehicledata/format.h"
#include "vehicledata/jwt.h"
#include "vehicledata/client/redact.h"

namespace vehicledata::client {

namespace {

using Clock = std::chrono::steady_clock;

std::int64_t now_epoch() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string seconds_text(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", s);
    return buf;
}

// One DEBUG line per request: "GET http://host/api/trims/v2?year=2019 -> 200, 12345 bytes, 8.1 ms".
// Values of query parameters whose name mentions a token, secret, jwt or password are
// redacted; the URL never holds userinfo (stripped from base_url) and headers are not logged.
std::string request_log_line(const std::string& what, const Response& r) {
    std::string line = what;
    const std::size_t q = line.find('?');
    if (q != std::string::npos) {
        std::string out = line.substr(0, q + 1);
        std::size_t i = q + 1;
        while (i <= line.size()) {
            std::size_t amp = line.find('&', i);
            if (amp == std::string::npos) amp = line.size();
            std::string pair = line.substr(i, amp - i);
            const std::size_t eq = pair.find('=');
            std::string name = pair.substr(0, eq);
            for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            const bool secret = name.find("token") != std::string::npos || name.find("secret") != std::string::npos ||
                                name.find("jwt") != std::string::npos || name.find("password") != std::string::npos;
            if (secret && eq != std::string::npos) pair = pair.substr(0, eq + 1) + "***";
            out += pair;
            if (amp < line.size()) out += '&';
            i = amp + 1;
        }
        line = out;
    }
    char buf[96];
    if (r.transferred())
        std::snprintf(buf, sizeof buf, " -> %ld, %zu bytes, %.1f ms", r.status, r.body.size(), r.seconds * 1000.0);
    else
        std::snprintf(buf, sizeof buf, " -> transfer failed (curl %d), %.1f ms", r.curl_code, r.seconds * 1000.0);
    return line + buf;
}

// The response cache's access tier: anonymous, or which account (the token,
// hashed with the secret as key: a wrong secret never reads the account's answers).
std::string cache_tier(const ClientOptions& o) {
    if (o.api_token.empty() || o.api_secret.empty()) return "anonymous";
    static const char* digits = "0123456789abcdef";
    std::string out = "account ";
    for (unsigned char c : jwt::hmac_sha256(o.api_secret, "vehicledata cache tier\n" + o.api_token)) {
        out += digits[c >> 4];
        out += digits[c & 15];
    }
    return out;
}

std::string strip_trailing_slash(std::string s) {
    while (!s.empty() && s.back() == '/') s.pop_back();
    return s;
}

}  // namespace

Client::Client(ClientOptions options)
    : options_(std::move(options)),
      transport_(options_.transport),
      bucket_(options_.rate_limit, options_.rate_limit_burst),
      login_bucket_(options_.login_rate_limit),
      jwt_(options_.jwt_cache_path, options_.jwt_margin),
      cache_(options_.cache, cache_tier(options_)) {
    options_.base_url = strip_trailing_slash(options_.base_url.empty() ? kDefaultBaseUrl : options_.base_url);
    if (options_.max_parallel < 1) options_.max_parallel = 1;
    remember_secret(options_.api_secret);
}

void Client::refuse_limited(const Response& r) const {
    if (r.limit.empty()) return;
    if (r.limit == "memory")
        throw LimitError("out of memory while receiving the answer", r.url, r.limit);
    std::int64_t value = r.limit == "max_body" ? options_.transport.max_body : options_.transport.max_decompressed;
    throw LimitError("answer refused: larger than " + r.limit + " (" + std::to_string(value) +
                     " bytes; raise the client option " + r.limit + " if this is expected)", r.url, r.limit);
}

void Client::check_pages(const Page& page) const {
    if (options_.max_pages > 0 && page.collection.pages > options_.max_pages)
        throw LimitError("the server announces " + std::to_string(page.collection.pages) + " pages, more than max_pages (" +
                         std::to_string(options_.max_pages) + ")", page.url, "max_pages");
}

Client::~Client() = default;

void Client::log(int level, const std::string& message) const {
    if (log_ && level >= log_level_.load(std::memory_order_relaxed)) log_(level, message);
}

ClientStats Client::stats() const {
    ClientStats s;
    s.requests = requests_.load();
    s.retries = retries_.load();
    s.logins = jwt_.logins();
    s.bytes = bytes_.load();
    s.rate_wait_seconds = static_cast<double>(rate_wait_us_.load()) / 1e6;
    s.reorder_peak = reorder_peak_.load();
    s.cache_hits = cache_hits_.load();
    return s;
}

std::string Client::cacheable(const std::string& target) const {
    if (!cache_.enabled()) return {};
    std::string url = url_for(target);
    const std::size_t scheme = url.find("://");
    const std::size_t slash = scheme == std::string::npos ? std::string::npos : url.find('/', scheme + 3);
    const std::string path = slash == std::string::npos ? "/" : url.substr(slash, url.find('?', slash) - slash);
    // Answers that change with every request of the account, or the feed's
    // build date and ZIP (a nightly job asks them to see what is new): never cached.
    for (schema::Kind kind : {schema::Kind::AccountRequests, schema::Kind::AccountToday, schema::Kind::FeedLastUpdated,
                              schema::Kind::FeedDownload, schema::Kind::Login})
        for (const auto& e : schema::endpoints())
            if (e.kind == kind && e.path == path) return {};
    return url;
}

std::optional<Page> Client::cached_page(const std::string& target, const schema::Record& record, schema::Shape shape,
                                        bool verbose) {
    const std::string url = cacheable(target);
    if (url.empty()) return std::nullopt;
    std::optional<Response> hit = cache_.lookup("GET", url);
    if (!hit) return std::nullopt;
    try {
        Page page = decode_page(hit->body, record, shape, hit->url, verbose);
        check_pages(page);
        ++cache_hits_;
        log(kDebug, request_log_line("GET " + url, *hit) + " (from the response cache)");
        return page;
    } catch (const DecodeError&) {
        cache_.remove("GET", url);  // a stored body that does not decode: fetched again
        return std::nullopt;
    }
}

std::string Client::url_for(const std::string& target) const {
    if (target.rfind("http://", 0) == 0 || target.rfind("https://", 0) == 0) {
        // Absolute links (the envelope's `next`) carry our JWT: only to our own origin.
        if (url_origin(target) != url_origin(options_.base_url))
            throw PaginationError("refusing a link to another origin than " + url_origin(options_.base_url) + ": " +
                                  url_origin(target), target);
        return target;
    }
    if (!target.empty() && target[0] == '/') return options_.base_url + target;
    return options_.base_url + "/" + target;
}

void Client::throttle(TokenBucket& bucket) {
    double wait = bucket.reserve();
    if (wait > 0) {
        rate_wait_us_ += static_cast<std::int64_t>(wait * 1e6);
        // Waits at the steady crawl pace (0.1 s) are routine; long ones are worth a line.
        log(wait > kLongWait ? kWarning : wait >= 1.0 ? kInfo : kDebug, "rate limit: waiting " + seconds_text(wait) + " s for the client-side token bucket (" +
                                              std::to_string(static_cast<int>(bucket.per_minute())) + "/min)");
        transport_.sleep(wait);
    }
}

void Client::raise_for(const Response& r) {
    const envelope::ErrorBody e = envelope::read_error(r.body, r.content_type);
    std::optional<double> retry_after;
    if (!r.retry_after.empty()) retry_after = parse_retry_after(r.retry_after, now_epoch());
    std::string message = e.message.empty() ? "HTTP " + std::to_string(r.status) : e.message;
    if (r.status == 414)
        message = "request target too long (HTTP 414 URI Too Long: the server refused a URL of " +
                  std::to_string(r.url.size()) + " bytes); use fewer or shorter conditions" +
                  (e.message.empty() ? std::string() : ": " + e.message);
    throw ApiError(static_cast<int>(r.status), e.exception, message, r.url, retry_after);
}

std::string Client::do_login() {
    RetryState state(options_.retry);
    while (true) {
        Request req;
        req.method = "POST";
        req.url = url_for(schema::find_endpoint(schema::Kind::Login)->path);
        req.headers = {"Content-Type: application/json", "Accept: text/plain"};
        std::string body = "{\"api_token\":";
        format::append_json_string(body, options_.api_token, format::JsonEscape::Plain);
        body += ",\"api_secret\":";
        format::append_json_string(body, options_.api_secret, format::JsonEscape::Plain);
        body += "}";
        req.body = std::move(body);
        throttle(login_bucket_);
        ++requests_;
        Response r = transport_.perform(req);
        bytes_ += static_cast<std::int64_t>(r.body.size());
        log(kDebug, request_log_line("POST " + r.url, r));
        refuse_limited(r);
        RetryDecision d;
        if (!r.transferred()) {
            d = state.transfer_failed(r.error);
            if (!d.retry)
                throw TransportError("login failed: " + r.error + (d.past_max_wait ? " (next retry in " + seconds_text(d.delay) +
                                                                       " s exceeds max_wait)" : std::string()),
                                     r.url, r.timed_out, r.curl_code);
        } else if (r.status >= 200 && r.status < 300) {
            std::string jwt = r.body;
            while (!jwt.empty() && (jwt.back() == '\n' || jwt.back() == '\r' || jwt.back() == ' ')) jwt.pop_back();
            if (jwt.size() >= 2 && jwt.front() == '"' && jwt.back() == '"') jwt = jwt.substr(1, jwt.size() - 2);
            if (!jwt::well_formed(jwt))
                throw DecodeError("login answered 200 with a body that is not a JWT (three base64url segments)", r.url);
            remember_secret(jwt);
            log(kDebug, "logged in at " + options_.base_url);
            return jwt;
        } else {
            d = state.status(r.status, r.retry_after);
            if (!d.retry) raise_for(r);
        }
        transport_.sleep(retrying(d, "login"));
    }
}

void Client::login() {
    if (!has_credentials()) return;
    (void)bearer();
}

std::string Client::bearer() {
    std::string jwt = jwt_.token([this] { return do_login(); });
    if (!jwt_.needs_check(jwt)) return jwt;
    std::lock_guard<std::mutex> lk(check_mutex_);
    if (!jwt_.needs_check(jwt)) return jwt_.token([this] { return do_login(); });
    Request req;
    req.url = url_for(schema::find_endpoint(schema::Kind::AccountToday)->path);
    req.headers = {"Accept: application/json", "Authorization: Bearer " + jwt};
    throttle(bucket_);
    ++requests_;
    Response r = transport_.perform(req);
    bytes_ += static_cast<std::int64_t>(r.body.size());
    bool rejected = r.transferred() &&
                    (r.status == 401 ||
                     (r.status == 500 && envelope::read_error(r.body, r.content_type).exception == envelope::kUnauthenticated));
    if (!rejected) {
        // Accepted (or not answerable now: the request itself will tell).
        jwt_.checked(jwt);
        return jwt;
    }
    log(kInfo, "the cached token was rejected (HTTP " + std::to_string(r.status) + ") by " + options_.base_url +
                   "; logging in again");
    jwt_.invalidate(jwt);
    return jwt_.token([this] { return do_login(); });
}

Request Client::make_request(const std::string& target, std::string* jwt_used) {
    Request req;
    req.url = url_for(target);
    req.headers.push_back("Accept: application/json");
    if (has_credentials()) {
        std::string jwt = bearer();
        req.headers.push_back("Authorization: Bearer " + jwt);
        if (jwt_used) *jwt_used = jwt;
    }
    return req;
}

double Client::retrying(const RetryDecision& d, const std::string& what) {
    ++retries_;
    log(d.delay > kLongWait ? kWarning : kInfo, "retrying " + what + " in " + seconds_text(d.delay) + " s (retry " + std::to_string(d.number) + " of " +
                   std::to_string(options_.retry.total) + ") after " + d.reason);
    return d.delay;
}

double Client::assess(const Response& r, RetryState& state, const std::string& jwt_used, const std::string& what) {
    log(kDebug, request_log_line(what, r));
    refuse_limited(r);
    if (!r.transferred()) {
        RetryDecision d = state.transfer_failed(r.error);
        if (!d.retry)
            throw TransportError(d.past_max_wait ? "transfer failed: " + r.error + " (next retry in " + seconds_text(d.delay) +
                                                       " s exceeds max_wait)"
                                                 : (r.timed_out ? "timed out: " : "transfer failed: ") + r.error,
                                 r.url, r.timed_out, r.curl_code);
        return retrying(d, what);
    }
    if (r.status >= 200 && r.status < 300) return -1;
    if (!jwt_used.empty()) {
        bool unauthenticated = r.status == 401 || (r.status == 500 && envelope::read_error(r.body, r.content_type).exception ==
                                                                          envelope::kUnauthenticated);
        if (unauthenticated && state.renew_token()) {
            jwt_.invalidate(jwt_used);
            log(kInfo, "token rejected (HTTP " + std::to_string(r.status) + ") on " + r.url + "; logging in again");
            return 0;
        }
    }
    RetryDecision d = state.status(r.status, r.retry_after);
    if (!d.retry) raise_for(r);
    return retrying(d, what);
}

std::optional<Response> Client::cached_response(const std::string& target) {
    const std::string url = cacheable(target);
    if (url.empty()) return std::nullopt;
    std::optional<Response> hit = cache_.lookup("GET", url);
    if (hit) {
        ++cache_hits_;
        log(kDebug, request_log_line("GET " + url, *hit) + " (from the response cache)");
    }
    return hit;
}

void Client::keep(const std::string& target, const Response& r) {
    if (!cache_.enabled()) return;
    const std::string url = cacheable(target);
    if (!url.empty()) cache_.store("GET", url, r);
}

Response Client::get(const std::string& target) {
    if (std::optional<Response> hit = cached_response(target)) return std::move(*hit);
    RetryState state(options_.retry);
    Response r = get(target, state);
    keep(target, r);
    return r;
}

Response Client::get(const std::string& target, RetryState& state) {
    while (true) {
        std::string jwt_used;
        Request req = make_request(target, &jwt_used);
        throttle(bucket_);
        ++requests_;
        Response r = transport_.perform(req);
        bytes_ += static_cast<std::int64_t>(r.body.size());
        double delay = assess(r, state, jwt_used, "GET " + req.url);
        if (delay < 0) return r;
        if (delay > 0) transport_.sleep(delay);
    }
}

Page Client::get_page(const std::string& target, const schema::Record& record, schema::Shape shape, bool verbose,
                      WaitBudget* budget) {
    if (std::optional<Page> hit = cached_page(target, record, shape, verbose)) return std::move(*hit);
    RetryState state(options_.retry, nullptr, budget);
    while (true) {
        Response r = get(target, state);
        double delay = 0;
        if (std::optional<Page> page = accept(r, target, state, record, shape, verbose, delay)) return std::move(*page);
        transport_.sleep(delay);
    }
}

std::vector<Page> Client::get_pages(const std::vector<std::string>& targets, const schema::Record& record,
                                    schema::Shape shape, bool verbose, const Crawl* crawl, WaitBudget* budget) {
    std::vector<std::optional<Page>> out(targets.size());
    std::size_t next = 0;  // pages before it are checked
    fetch_pages(targets, record, shape, [&](std::size_t i, Page&& p) {
        out[i] = std::move(p);
        for (; next < out.size() && out[next]; ++next)
            if (crawl) check_paging(*out[next], crawl->numbers.at(next), &crawl->first);
    }, verbose, 0, budget);
    std::vector<Page> pages;
    pages.reserve(out.size());
    for (auto& p : out) pages.push_back(std::move(*p));
    return pages;
}

Page Client::collect_pages(const Page& first, const std::vector<std::string>& targets, const schema::Record& record,
                           schema::Shape shape, bool verbose, const Crawl* crawl, WaitBudget* budget) {
    // Reserve for the announced total, but never more than full pages could hold.
    std::size_t expected = first.rows;
    if (first.collection.total > 0)
        expected = std::max(expected, std::min(static_cast<std::size_t>(first.collection.total),
                                               first.rows * (targets.size() + 1)));
    Page acc = empty_like(first, expected);
    append_page(acc, first);  // copied once, into the reserved page
    // Pages that arrive before an earlier one wait here; fetch_pages' window
    // (reorder_window()) bounds them while the earlier page is retried.
    std::map<std::size_t, Page> waiting;
    std::size_t next = 0;
    fetch_pages(targets, record, shape, [&](std::size_t i, Page&& p) {
        waiting.emplace(i, std::move(p));
        for (auto it = waiting.find(next); it != waiting.end(); it = waiting.find(next)) {
            if (crawl) check_paging(it->second, crawl->numbers.at(next), &crawl->first);
            append_page(acc, std::move(it->second));
            waiting.erase(it);
            ++next;
        }
        const auto held = static_cast<std::int64_t>(waiting.size());
        for (auto peak = reorder_peak_.load(); held > peak && !reorder_peak_.compare_exchange_weak(peak, held);) {
        }
    }, verbose, reorder_window(), budget);
    return acc;
}

std::size_t Client::reorder_window() const {
    return 2 * static_cast<std::size_t>(std::max(1, options_.max_parallel));
}

bool refused_alone(const ApiError& e) {
    return e.status >= 400 && e.status < 500 && e.status != 401 && e.status != 403 && e.status != 429;
}

void Client::fetch_pages(const std::vector<std::string>& targets, const schema::Record& record, schema::Shape shape,
                         const std::function<void(std::size_t, Page&&)>& on_page, bool verbose, std::size_t window,
                         WaitBudget* budget, const std::function<void(std::size_t, const ApiError&)>& on_refused,
                         int parallel) {
    const std::size_t n = targets.size();
    if (n == 0) return;
    auto refused = [&](const ApiError& e) { return on_refused && refused_alone(e); };
    if (n == 1) {
        std::optional<Page> page;
        try {
            page = get_page(targets[0], record, shape, verbose, budget);
        } catch (const ApiError& e) {
            if (!refused(e)) throw;
            on_refused(0, e);
            return;
        }
        on_page(0, std::move(*page));
        return;
    }
    struct State {
        RetryState retry;
        std::string jwt_used;
    };
    std::vector<State> st;
    st.reserve(n);
    for (std::size_t i = 0; i < n; ++i) st.push_back(State{RetryState(options_.retry, nullptr, budget), {}});
    PageScheduler plan(n, window);
    MultiBatch batch(transport_);
    std::optional<Clock::time_point> blocked_since;
    const std::size_t max_parallel = static_cast<std::size_t>(std::max(1, parallel > 0 ? parallel : options_.max_parallel));
    while (!plan.finished()) {
        int wait_ms = 100;
        // Start what may start: order kept, each inside the token bucket.
        while (batch.running() < max_parallel) {
            const auto now = Clock::now();
            std::optional<std::size_t> due = plan.take_due(now, wait_ms);
            if (!due) break;
            const std::size_t i = *due;
            if (cache_.enabled()) {  // an answer in the response cache: no request, no token
                if (std::optional<Page> hit = cached_page(targets[i], record, shape, verbose)) {
                    on_page(i, std::move(*hit));
                    plan.delivered(i);
                    continue;
                }
            }
            double wait = try_token();
            if (wait > 0) {
                plan.put_back(i);
                if (!blocked_since) blocked_since = now;
                wait_ms = std::min<int>(wait_ms, static_cast<int>(wait * 1000) + 1);
                break;
            }
            if (blocked_since) {  // wall time the crawl was held back by the bucket
                rate_wait_us_ += std::chrono::duration_cast<std::chrono::microseconds>(now - *blocked_since).count();
                blocked_since.reset();
            }
            batch.add(i, start_request(targets[i], &st[i].jwt_used));
        }
        if (batch.running() == 0 && plan.nothing_pending()) break;
        for (auto& [i, r] : batch.poll(batch.running() ? wait_ms : std::max(1, wait_ms))) {
            double delay = 0;
            try {
                delay = settle(r, st[i].retry, st[i].jwt_used);
            } catch (const ApiError& e) {
                if (!refused(e)) throw;
                on_refused(i, e);
                plan.delivered(i);
                continue;
            }
            if (delay < 0) {
                if (std::optional<Page> page = accept(r, targets[i], st[i].retry, record, shape, verbose, delay)) {
                    on_page(i, std::move(*page));
                    plan.delivered(i);
                    continue;
                }
            }
            plan.retry_at(i, Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(delay)));
        }
    }
}

Request Client::start_request(const std::string& target, std::string* jwt_used) {
    Request req = make_request(target, jwt_used);
    ++requests_;
    return req;
}

double Client::try_token() {
    const double wait = bucket_.reserve();
    if (wait > 0) bucket_.refund();
    return wait;
}

void Client::note_rate_wait(double seconds) {
    if (seconds > 0) rate_wait_us_ += static_cast<std::int64_t>(seconds * 1e6);
}

double Client::settle(const Response& r, RetryState& state, const std::string& jwt_used) {
    bytes_ += static_cast<std::int64_t>(r.body.size());
    return assess(r, state, jwt_used, "GET " + r.url);
}

std::optional<Page> Client::accept(Response& r, const std::string& target, RetryState& state,
                                   const schema::Record& record, schema::Shape shape, bool verbose, double& delay) {
    try {
        Page page = decode_page(r.body, record, shape, r.url, verbose);
        page.synthetic = synthetic_fields(r.synthetic);
        check_pages(page);
        keep(target, r);
        std::string().swap(r.body);
        return page;
    } catch (const DecodeError& e) {
        RetryDecision d = state.decode_failed(e.what());
        if (!d.retry) throw;
        delay = retrying(d, "GET " + r.url);
        return std::nullopt;
    }
}

Download::Download(Client& client, std::string target, std::string path, bool resume, ProgressFn progress,
                   double deadline, std::int64_t max_bytes)
    : client_(client), target_(std::move(target)), path_(std::move(path)), progress_(std::move(progress)),
      max_bytes_(max_bytes),
      budget_(deadline > 0 ? deadline : std::max(3600.0, client.options().transport.timeout)),
      started_(std::chrono::steady_clock::now()), state_(client.options().retry) {
    if (resume) {
        struct stat sb;
        if (::stat(path_.c_str(), &sb) == 0) offset_ = sb.st_size;
        result_.resumed = offset_ > 0;
    }
}

Download::~Download() { abandon(); }

void Download::abandon() {
    if (file_) std::fclose(file_);
    file_ = nullptr;
}

double Download::remaining() const {
    return budget_ - std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
}

TransportError Download::out_of_time(const std::string& url) const {
    return TransportError("download timed out: not complete within its total timeout of " + seconds_text(budget_) + " s" +
                          " (retries and waits included)", url, true);
}

Request Download::start() {
    abandon();
    jwt_used_.clear();
    Request req = client_.make_request(target_, &jwt_used_);
    req.headers[0] = "Accept: application/zip, application/octet-stream, */*";
    req.resume_from = offset_;
    // The transfer gets what is left of the download's total deadline (an
    // hour unless told); a stalled one ends after the low-speed window.
    if (remaining() <= 0) throw out_of_time(client_.url_for(target_));
    req.timeout = std::max(0.001, remaining());
    ++client_.requests_;
    file_ = std::fopen(path_.c_str(), offset_ > 0 ? "ab" : "wb");
    if (!file_) throw TransportError("cannot open " + path_ + " for writing", client_.url_for(target_));
    first_ = true;
    written_ = offset_;
    write_failed_ = too_big_ = false;
    req.sink = [this](long status, const std::string& content_range, const char* data, std::size_t len) {
        if (first_) {
            first_ = false;
            // A 206 (or a 200 whose Content-Range starts at our offset) continues
            // the file; any other 2xx is the whole body: start over.
            bool continues = status == 206 || content_range.rfind("bytes " + std::to_string(offset_) + "-", 0) == 0;
            if (offset_ > 0 && !continues) {
                std::fflush(file_);
                if (std::freopen(path_.c_str(), "wb", file_) == nullptr) {
                    file_ = nullptr;
                    write_failed_ = true;
                    return false;
                }
                written_ = 0;
                result_.resumed = false;
            }
        }
        if (max_bytes_ > 0 && written_ + static_cast<std::int64_t>(len) > max_bytes_) {
            too_big_ = true;
            return false;
        }
        if (std::fwrite(data, 1, len, file_) != len) {
            write_failed_ = true;
            return false;
        }
        written_ += static_cast<std::int64_t>(len);
        return true;
    };
    if (progress_) req.progress = [this](std::int64_t, std::int64_t total) { progress_(written_, total); };
    return req;
}

std::optional<DownloadResult> Download::finish(const Response& r, double& delay) {
    abandon();
    if (write_failed_) throw TransportError("cannot write " + path_, r.url);
    if (too_big_)
        throw LimitError("download refused: larger than max_bytes (" + std::to_string(max_bytes_) +
                         " bytes; raise max_bytes if this is expected)", r.url, "max_bytes");
    client_.bytes_ += written_ - offset_;
    if (r.transferred() && r.status == 416 && offset_ > 0) {
        // Nothing left to fetch: the partial file is already complete.
        result_.bytes = offset_;
        result_.content_type = r.content_type;
        return result_;
    }
    delay = client_.assess(r, state_, jwt_used_, "download " + r.url);
    if (delay < 0) {
        result_.bytes = written_;
        result_.content_type = r.content_type;
        if (progress_) progress_(written_, written_);
        return result_;
    }
    if (!r.transferred()) {
        offset_ = written_;  // resume from what arrived
        if (offset_ > 0) result_.resumed = true;
    }
    if (delay >= remaining()) throw out_of_time(r.url);
    return std::nullopt;
}

DownloadResult Client::download(const std::string& target, const std::string& path, bool resume,
                                const ProgressFn& progress, double deadline, std::int64_t max_bytes) {
    Download d(*this, target, path, resume, progress, deadline, max_bytes);
    while (true) {
        Request req = d.start();
        throttle(bucket_);
        Response r;
        try {
            r = transport_.perform(req);
        } catch (...) {
            d.abandon();
            throw;
        }
        double delay = 0;
        if (std::optional<DownloadResult> done = d.finish(r, delay)) return *done;
        if (delay > 0) transport_.sleep(delay);
    }
}

}  // namespace vehicledata::client
