// The emulator's clock, accounts and JWTs: the demo accounts, login and the
// Authorization header's identity.
//
// Thread safety: Clock and Auth are safe to use from the server's worker threads at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
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

}  // namespace vehicledata::emulator
