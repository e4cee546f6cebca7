// Retry policy with urllib3's vocabulary, and Retry-After parsing.
// Plain values and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string_view>

namespace vehicledata::client {

struct RetryPolicy {
    int total = 3;                          // retries after the first attempt (0: none)
    double backoff_factor = 0.5;            // sleep = backoff_factor * 2^(retry-1)
    double backoff_max = 30.0;              // cap of the exponential sleep
    double backoff_jitter = 0.1;            // + uniform(0, jitter) seconds
    std::set<int> status_forcelist{429, 503};
    bool respect_retry_after = true;        // honour Retry-After on forcelist statuses
    double max_wait = 120.0;                // a single sleep longer than this raises instead
    bool retry_transport_errors = true;     // connection errors, drops, truncated bodies, timeouts
};

// Exponential backoff (without jitter) before retry number `retry` (1-based).
double backoff_seconds(const RetryPolicy& policy, int retry);

// Retry-After as delta-seconds ("120", "1.5") or an HTTP date
// ("Wed, 21 Oct 2015 07:28:00 GMT"); `now_epoch` is the current time.
// nullopt if absent or unparseable; never negative.
std::optional<double> parse_retry_after(std::string_view value, std::int64_t now_epoch);

// An HTTP date (IMF-fixdate, RFC 850 or asctime) to epoch seconds.
std::optional<std::int64_t> parse_http_date(std::string_view value);

}  // namespace vehicledata::client
