// Retry policy with urllib3's vocabulary, the retry decision of one request,
// and Retry-After parsing.
//
// RetryPolicy is a plain value (bound to Python as vehicledata.Retry).
// RetryState is the single place that decides whether a failed attempt is
// retried, how long to sleep first, and how much of the budget is left: the
// client keeps one per request (GET, page, parallel page, download, login).
// Pure functions are thread-safe; a RetryState belongs to one request.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace vehicledata::client {

struct RetryPolicy {
    int total = 3;                          // retries after the first attempt (0: none)
    double backoff_factor = 0.5;            // sleep = backoff_factor * 2^(retry-1)
    double backoff_max = 30.0;              // cap of the exponential sleep
    double backoff_jitter = 0.1;            // + uniform(0, jitter) seconds
    std::set<int> status_forcelist{429, 503};
    bool respect_retry_after = true;        // honour Retry-After on forcelist statuses
    double max_wait = 120.0;                // sleeps of one request past this total raise instead
    bool retry_transport_errors = true;     // connection errors, drops, truncated bodies, timeouts
};

// std::invalid_argument naming the field when a number is negative.
void validate(const RetryPolicy& policy);

// Exponential backoff (without jitter) before retry number `retry` (1-based).
double backoff_seconds(const RetryPolicy& policy, int retry);

// What to do after a failed attempt.
struct RetryDecision {
    bool retry = false;          // false: give up (raise the attempt's error)
    bool past_max_wait = false;  // gave up because the sleep would exceed max_wait
    double delay = 0;            // seconds to sleep before the next attempt (or the refused sleep)
    int number = 0;              // the retry this is (1-based; the budget used so far)
    std::string reason;          // for the log line: the error, "HTTP 503", "HTTP 429 (Retry-After 1)"
};

// The waiting of one call: a crawl's first page and every later page, each request with its own
// RetryState.  The sleeps their states approve are added up here, and a sleep that would take the
// call's total past max_wait is refused like one past the request's own total: so a whole crawl
// (parallel pages' sleeps counted each, overlapping or not) never waits longer than max_wait.
// Thread-safe: one budget may be shared by requests on several threads.
class WaitBudget {
public:
    // Add `delay` when the total stays within `max_wait` (true); else add nothing (false).
    bool draw(double delay, double max_wait);
    double waited() const;

private:
    mutable std::mutex mutex_;
    double waited_ = 0;
};

// The retries of one request.  Every failure of any kind draws on one budget
// of `policy.total` retries: transfers that failed (connection errors, drops,
// truncated bodies, timeouts), bodies that did not decode (both only with
// retry_transport_errors) and statuses of the forcelist.  The sleep is
// backoff_seconds() + uniform(0, backoff_jitter), or the server's Retry-After
// on a status when respect_retry_after; a sleep that would take the request's total of sleeps
// over max_wait gives up.
class RetryState {
public:
    // `jitter_source`: uniform(0, max) (tests pass a fixed one); null: a random one.
    // `budget`: the call's (null: only this request's own total is capped).
    explicit RetryState(const RetryPolicy& policy, double (*jitter_source)(double max) = nullptr,
                        WaitBudget* budget = nullptr);

    // A transfer without an HTTP answer; `error` is the transport's text.
    RetryDecision transfer_failed(const std::string& error);
    // A 2xx body that did not decode; `error` is the decoder's text.
    RetryDecision decode_failed(const std::string& error);
    // A status outside 2xx with its Retry-After header ("" if none); `now_epoch`
    // dates an HTTP-date Retry-After (< 0: the system clock).
    RetryDecision status(long status, std::string_view retry_after, std::int64_t now_epoch = -1);
    // A rejected token is renewed once per request without using the budget:
    // true the first time (log in again and repeat at once), false after.
    bool renew_token();

    int retries() const { return retries_; }
    const RetryPolicy& policy() const { return policy_; }

private:
    RetryDecision backoff(std::string reason);
    RetryDecision approve(RetryDecision d);  // past_max_wait/retry from the total slept so far
    const RetryPolicy& policy_;
    double (*jitter_)(double);
    WaitBudget* budget_;
    int retries_ = 0;
    double waited_ = 0;  // seconds of the sleeps approved so far
    bool renewed_ = false;
};

// Retry-After as delta-seconds ("120", "1.5") or an HTTP date
// ("Wed, 21 Oct 2015 07:28:00 GMT"); `now_epoch` is the current time.
// nullopt if absent or unparseable; never negative.
std::optional<double> parse_retry_after(std::string_view value, std::int64_t now_epoch);

// An HTTP date (IMF-fixdate, RFC 850 or asctime) to epoch seconds.
std::optional<std::int64_t> parse_http_date(std::string_view value);

}  // namespace vehicledata::client
