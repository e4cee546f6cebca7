// The client core: authenticated GETs with retries and a client-side rate
// limit, page decoding, parallel pages and streamed downloads.
//
// Threading: a Client may be shared by threads.  Every call blocks the
// calling thread only (the bindings release the GIL around them); the
// interrupt check and the logger are called from the calling thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vehicledata/client/jwt_cache.h"
#include "vehicledata/client/page.h"
#include "vehicledata/client/paging.h"
#include "vehicledata/client/response_cache.h"
#include "vehicledata/client/retry.h"
#include "vehicledata/client/token_bucket.h"
#include "vehicledata/client/transport.h"
#include "vehicledata/schema.h"

namespace vehicledata::client {

class ApiError;        // errors.h
class TransportError;  // errors.h

inline constexpr const char* kDefaultBaseUrl = "https://carapi.app";

struct ClientOptions {
    std::string base_url = kDefaultBaseUrl;
    std::string api_token;
    std::string api_secret;
    TransportOptions transport;
    RetryPolicy retry;
    double rate_limit = 600;         // requests per minute; <= 0: no client-side limit
    double login_rate_limit = 20;    // logins per minute; <= 0: no limit
    double rate_limit_burst = -1;    // requests sent at once before the rate applies; < 0: rate_limit / 10
    std::string jwt_cache_path;      // "" : memory only
    int jwt_margin = 300;            // renew this many seconds before exp
    int max_parallel = 4;            // concurrent transfers in get_pages()
    std::int64_t max_pages = 100000; // a larger `pages` in an envelope is refused (LimitError)
    // The on-disk response cache (off unless cache.dir is set): get(), get_page(),
    // get_pages() and collect_pages() answer a GET from it, per access tier, while
    // the entry is younger than cache.ttl; downloads, logins and the account and
    // feed-date endpoints are never cached.
    ResponseCacheOptions cache;
};

// Log levels as in Python's logging.
enum LogLevel { kDebug = 10, kInfo = 20, kWarning = 30 };
// A wait longer than this (seconds: a retry's sleep, the token bucket) is logged at kWarning.
constexpr double kLongWait = 2.0;
using LogFn = std::function<void(int level, const std::string& message)>;
using ProgressFn = std::function<void(std::int64_t done, std::int64_t total)>;

// The crawl a batch of pages belongs to: get_pages() and collect_pages() check
// each page against the crawl's first page (check_paging) as the pages arrive,
// in order, and throw PaginationError on the first that contradicts it.
struct Crawl {
    Paging first;                       // the crawl's first page
    std::vector<std::int64_t> numbers;  // the page number of each target
};

struct ClientStats {
    std::int64_t requests = 0;     // HTTP requests sent (logins included)
    std::int64_t retries = 0;
    std::int64_t logins = 0;
    std::int64_t bytes = 0;        // body bytes received
    double rate_wait_seconds = 0;  // time spent waiting for the token bucket
    // Most pages collect_pages() held at once, arrived but waiting on an earlier
    // one (being retried or slower); never above reorder_window() - 1.
    std::int64_t reorder_peak = 0;
    std::int64_t cache_hits = 0;   // answers served from the response cache (no request sent)
};

struct DownloadResult {
    std::int64_t bytes = 0;        // final size of the file
    bool resumed = false;          // continued a partial file
    std::string content_type;
};

class Client;

// Whether a final error is the server refusing one target for itself: a 4xx
// other than 401, 403 and 429 (those are about the client: its credentials,
// its rate).  A batch that hands refusals over goes on after one
// (Client::fetch_pages' `on_refused`, the Engine's Job::refused).
bool refused_alone(const ApiError& e);

// One download (Client::download) across its attempts, for a driver of its own
// transfers: start() gives the next attempt's request (streaming into the file,
// resumed from what it holds), finish() judges the attempt.  Client::download()
// and the asyncio Engine both drive one, so the resume, deadline, max_bytes,
// retry and auth rules have one implementation.  Not movable (the request's
// sink points at it); the file is closed when it is destroyed.
class Download {
public:
    Download(Client& client, std::string target, std::string path, bool resume, ProgressFn progress = {},
             double deadline = 0, std::int64_t max_bytes = 0);
    ~Download();
    Download(const Download&) = delete;
    Download& operator=(const Download&) = delete;

    // The next attempt (with the JWT: may log in first; opens the file),
    // counted as sent: a Timeout (TransportError) when the deadline has passed.
    Request start();
    // The attempt ended: the result when the download is complete, else nullopt
    // with `delay` the wait before the next attempt; throws the final error
    // (ApiError, TransportError, LimitError past max_bytes, Timeout past the deadline).
    std::optional<DownloadResult> finish(const Response& r, double& delay);
    // The attempt's transfer ended without a response (interrupted): closes the file.
    void abandon();

private:
    double remaining() const;
    TransportError out_of_time(const std::string& url) const;

    Client& client_;
    std::string target_, path_;
    ProgressFn progress_;
    std::int64_t max_bytes_;
    double budget_;
    std::chrono::steady_clock::time_point started_;
    RetryState state_;
    DownloadResult result_;
    std::int64_t offset_ = 0, written_ = 0;
    std::string jwt_used_;
    std::FILE* file_ = nullptr;
    bool first_ = true, write_failed_ = false, too_big_ = false;
};

class Client {
public:
    explicit Client(ClientOptions options);
    ~Client();

    // GET base_url + target (a path with query, or an absolute URL).  Adds the
    // JWT when credentials are set, retries per the policy, waits for the
    // token bucket.  Returns 2xx responses; throws ApiError, TransportError,
    // Interrupted.
    Response get(const std::string& target);
    // get() then decode_page() (`verbose`: the target asks for verbose=yes,
    // see decoded_fields()); a body that fails to decode is retried like a
    // transport failure (one retry budget for the request), then raises DecodeError.
    // `budget` (here and below): the waiting of the call the request belongs to (retry.h; null: none).
    Page get_page(const std::string& target, const schema::Record& record, schema::Shape shape, bool verbose = false,
                  WaitBudget* budget = nullptr);
    // Several pages at once (multi interface, token bucket, retries per
    // page); results in the order of `targets`, checked against `crawl` if given.
    std::vector<Page> get_pages(const std::vector<std::string>& targets, const schema::Record& record,
                                schema::Shape shape, bool verbose = false, const Crawl* crawl = nullptr,
                                WaitBudget* budget = nullptr);
    // Like get_pages(), but each page is handed to `on_page(index, page)` as
    // soon as it is decoded (completion order, on the calling thread).  With a
    // `window` (> 0), target i is not sent until every target before
    // i - window + 1 has been handed over, so at most window - 1 pages arrive
    // ahead of one still missing.
    // With `on_refused`, a target the server refuses for itself (refused_alone(),
    // after its retries) is handed to
    // `on_refused(index, error)` and the batch goes on (api.vin.decode_many's
    // bad VINs); without it, that ApiError ends the batch.
    void fetch_pages(const std::vector<std::string>& targets, const schema::Record& record, schema::Shape shape,
                     const std::function<void(std::size_t, Page&&)>& on_page, bool verbose = false,
                     std::size_t window = 0, WaitBudget* budget = nullptr,
                     const std::function<void(std::size_t, const ApiError&)>& on_refused = {},
                     int parallel = 0);  // concurrent transfers (<= 0: options().max_parallel)
    // Fetch `targets` concurrently and append them in order to a copy of
    // `first` (columns reserved for first.collection.total rows), releasing
    // each page once appended: peak memory stays near the final size.  Each
    // page is checked against `crawl` (if given) before it is appended.  Pages
    // that arrive ahead of a missing one (retried, slower) wait, at most
    // reorder_window() - 1 of them: no page further ahead is sent meanwhile.
    Page collect_pages(const Page& first, const std::vector<std::string>& targets, const schema::Record& record,
                       schema::Shape shape, bool verbose = false, const Crawl* crawl = nullptr,
                       WaitBudget* budget = nullptr);
    // Stream a GET to `path`; with resume, continue an existing partial file
    // (Range request; a 200 answer to it starts the file over).  Retries resume
    // from what was written.  The whole download, retries and their waits
    // included, ends as a Timeout after `deadline` seconds (<= 0: an hour, or
    // the transport timeout if longer); a file growing past `max_bytes` (> 0)
    // ends it as a LimitError ("max_bytes", curl's --max-filesize).
    DownloadResult download(const std::string& target, const std::string& path, bool resume,
                            const ProgressFn& progress = {}, double deadline = 0, std::int64_t max_bytes = 0);
    // Log in now (normally done lazily).  Throws AuthenticationError on bad credentials.
    void login();

    void set_logger(LogFn log) { log_ = std::move(log); }
    // Lines below `level` are not handed to the logger (default 0: every line).  Thread-safe.
    void set_log_level(int level) { log_level_.store(level, std::memory_order_relaxed); }
    void set_interrupt_check(std::function<bool()> check) { transport_.set_interrupt_check(std::move(check)); }

    const ClientOptions& options() const { return options_; }
    Transport& transport() { return transport_; }
    bool has_credentials() const { return !options_.api_token.empty() && !options_.api_secret.empty(); }
    bool has_token() const { return jwt_.has_token(); }
    std::optional<std::int64_t> token_expires_at() const { return jwt_.expires_at(); }
    ClientStats stats() const;
    // 2 * max_parallel: how far ahead of the first missing page collect_pages() sends.
    std::size_t reorder_window() const;
    std::string url_for(const std::string& target) const;

    // ---- the steps of one page request, for a driver of its own transfers --------
    // fetch_pages() and the asyncio face's Engine (engine.h) both drive a
    // MultiBatch with these, so every rule (JWT, token bucket, retries,
    // Retry-After, limits, decoding) has one implementation.
    // The request for `target` with the JWT (may log in first: blocks); counted as sent.
    Request start_request(const std::string& target, std::string* jwt_used);
    // 0 when a request may be sent now (a token of the bucket taken), else the
    // seconds until one may (nothing taken).
    double try_token();
    // Add `seconds` to stats().rate_wait_seconds (a driver held back by the bucket).
    void note_rate_wait(double seconds);
    // A finished attempt of a page request: counts its bytes, then -1 when it
    // succeeded, else the delay before the next attempt; throws the final error.
    double settle(const Response& r, RetryState& state, const std::string& jwt_used);
    // Decode a successful answer of `target` (checked against max_pages; its
    // origin labels kept; stored in the response cache when one is on; the body
    // is freed). A body that fails to decode draws on `state`: nullopt with
    // `delay` set to the wait before the retry, or DecodeError when the budget is spent.
    std::optional<Page> accept(Response& r, const std::string& target, RetryState& state, const schema::Record& record,
                               schema::Shape shape, bool verbose, double& delay);
    // The response cache's steps (no-ops when it is off; get(), get_page(),
    // fetch_pages() and the Engine all use them): a cached page of `target`
    // decoded, or nullopt (a cached body that does not decode is dropped); a
    // cached raw answer of `target`, or nullopt; store a successful answer of
    // `target` when it may be cached.  A hit counts in stats().cache_hits.
    std::optional<Page> cached_page(const std::string& target, const schema::Record& record, schema::Shape shape,
                                    bool verbose);
    std::optional<Response> cached_response(const std::string& target);
    void keep(const std::string& target, const Response& r);

private:
    friend class Download;
    Request make_request(const std::string& target, std::string* jwt_used);
    // The JWT to send; a token read from the disk cache is first validated
    // with one GET /api/account/requests-today (an invalid token answers 401
    // or 500 UnauthenticatedException there) and replaced by a fresh login
    // if the server rejects it.
    std::string bearer();
    std::string do_login();
    void throttle(TokenBucket& bucket);
    // get() drawing on the retry budget of a longer request (get_page()).
    Response get(const std::string& target, RetryState& state);
    // Hand a finished attempt to the request's RetryState.  Returns the delay
    // before the next attempt (>= 0; 0 after a token renewal) or -1 when the
    // response is final (success).  Throws when it is a final error.
    double assess(const Response& r, RetryState& state, const std::string& jwt_used, const std::string& what);
    // Count and log ("retrying <what> in ...") a retry the state decided; its delay.
    double retrying(const RetryDecision& d, const std::string& what);
    [[noreturn]] void raise_for(const Response& r);
    void refuse_limited(const Response& r) const;  // LimitError for a transfer a limit aborted
    void check_pages(const Page& page) const;      // LimitError past max_pages
    void log(int level, const std::string& message) const;
    // The URL of `target` when its answer may come from / go to the response cache, else "".
    std::string cacheable(const std::string& target) const;

    ClientOptions options_;
    Transport transport_;
    TokenBucket bucket_;
    TokenBucket login_bucket_;
    JwtCache jwt_;
    LogFn log_;
    std::atomic<int> log_level_{0};
    std::atomic<std::int64_t> requests_{0}, retries_{0}, bytes_{0};
    std::atomic<std::int64_t> rate_wait_us_{0};
    std::atomic<std::int64_t> reorder_peak_{0};
    std::atomic<std::int64_t> cache_hits_{0};
    ResponseCache cache_;
    std::mutex check_mutex_;  // one validation of a disk-cached token at a time
};

}  // namespace vehicledata::client
