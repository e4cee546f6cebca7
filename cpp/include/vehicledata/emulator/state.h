// Mutable server state of the emulator: clock, accounts and JWTs, rate-limit
// windows, usage counters, scheduled faults and request statistics.
//
// Thread safety: every class here is safe to use from the server's worker
// threads at once (internal mutexes or atomics), unless a comment says otherwise.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace vehicledata::emulator {

// Wall clock plus an offset settable through the control plane (tests shift
// time to expire JWTs and rate windows without sleeping).
class Clock {
public:
    std::int64_t now_ms() const;
    std::int64_t now_seconds() const { return now_ms() / 1000; }
    void set_offset_seconds(std::int64_t s) { offset_ms_.store(s * 1000); }
    std::int64_t offset_seconds() const { return offset_ms_.load() / 1000; }

private:
    std::atomic<std::int64_t> offset_ms_{0};
};

struct Account {
    std::string api_token;
    std::string api_secret;
    bool subscribed = false;
    bool data_feed = false;
    std::string rate_limit_type = "hard";  // "hard" or "soft"
    std::string id;                         // UUID, derived from api_token
};

// The documented demo accounts (premium, basic, free).
std::vector<Account> default_accounts();
// Reads a JSON list of accounts; throws std::runtime_error naming the problem.
std::vector<Account> load_accounts(const std::string& path);
std::vector<Account> parse_accounts(std::string_view json_text);
// Deterministic UUID (version 4 layout) from a SHA-256 of the text.
std::string uuid_from(std::string_view text);
// A random UUID v4.
std::string random_uuid();

// Who is calling, from the Authorization header.
struct Identity {
    bool valid = false;          // a valid JWT was presented
    bool presented = false;      // an Authorization header was present
    std::string account_id;      // JWT sub
    bool subscribed = false;     // JWT user.subscriptions is not empty
    bool data_feed = false;      // JWT user.addons.data_feed
    std::string problem;         // why the token was rejected ("" if valid or absent)
};

class Auth {
public:
    Auth(std::vector<Account> accounts, std::string secret, std::int64_t ttl, const Clock& clock);
    // The account with these credentials, or nullptr.
    const Account* find(std::string_view api_token, std::string_view api_secret) const;
    // A signed JWT for the account (claims as API-NOTES.md).
    std::string issue(const Account& account) const;
    // Checks an `Authorization: Bearer <jwt>` header value.
    Identity identify(std::string_view authorization) const;
    const std::vector<Account>& accounts() const { return accounts_; }

private:
    std::vector<Account> accounts_;
    std::string secret_;
    std::int64_t ttl_;
    const Clock& clock_;
};

// Sliding-window request limiter: at most `limit` hits per key in any
// `window_ms` interval.  Rejected hits are not recorded.
class RateLimiter {
public:
    explicit RateLimiter(std::int64_t window_ms) : window_ms_(window_ms) {}
    // Records a hit if allowed.  Otherwise returns false and sets
    // retry_after_seconds (>= 1) to when the oldest hit leaves the window.
    bool hit(const std::string& key, int limit, std::int64_t now_ms, int& retry_after_seconds);
    void reset();

private:
    static constexpr int kShards = 16;
    struct Shard {
        std::mutex mutex;
        std::unordered_map<std::string, std::deque<std::int64_t>> hits;
    };
    std::int64_t window_ms_;
    Shard shards_[kShards];
};

// Requests to rate-limited endpoints per account and day (UTC-5).
class UsageCounters {
public:
    void count(const std::string& account_id, std::int64_t now_seconds);
    std::int64_t today(const std::string& account_id, std::int64_t now_seconds) const;
    // Days from the first day of the previous month (UTC-5) to today, oldest
    // first, days without requests left out.
    std::vector<std::pair<std::string, std::int64_t>> since_last_month(const std::string& account_id,
                                                                       std::int64_t now_seconds) const;
    void reset();

private:
    mutable std::mutex mutex_;
    std::unordered_map<std::string, std::map<std::int64_t, std::int64_t>> days_;  // account -> day -> count
};

enum class FaultAction { Status, Drop, Truncate, Delay };

struct Fault {
    std::string path;              // prefix of the request path
    int count = 1;                 // requests left to affect
    int status = 503;
    int retry_after = -1;          // seconds for Retry-After; -1: no header
    std::optional<std::string> body;
    int delay_ms = 0;
    FaultAction action = FaultAction::Status;
};

// Bounds of the control plane's faults: scheduled at once, and the size of a fault's body.
inline constexpr std::size_t kMaxFaults = 1000;
inline constexpr std::size_t kMaxFaultBody = 65536;

// Parses the control plane's fault JSON; throws std::invalid_argument naming the problem.
Fault parse_fault(std::string_view json_text);

class Faults {
public:
    // Throws std::invalid_argument past kMaxFaults.
    void add(Fault f);
    void clear();
    // Takes one use of the first fault whose path prefixes `path`.
    std::optional<Fault> take(std::string_view path);
    std::size_t size() const;

private:
    mutable std::mutex mutex_;
    std::vector<Fault> faults_;
};

// Request counts for GET /_emulator/stats (control plane excluded).
class Stats {
public:
    void record(const std::string& path, int status);
    std::string to_json() const;
    void reset();

private:
    mutable std::mutex mutex_;
    std::int64_t total_ = 0;
    std::map<std::string, std::int64_t> by_path_;
    std::map<int, std::int64_t> by_status_;
};

}  // namespace vehicledata::emulator
