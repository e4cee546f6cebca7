// JWT cache: one token per (API token, base URL), renewed before it expires.
//
// token() returns a valid JWT, logging in when there is none or when `exp` is
// within the margin (min(margin, lifetime / 4)); the login runs once even if
// many threads ask at the same time (single flight: the others wait for it).
// invalidate() drops a token the server rejected (401) so the next token()
// logs in again.  With a disk path, the token is also read from and written to
// that file (mode 0600, written atomically through an O_EXCL|O_NOFOLLOW temp
// file; used only in a directory owned by this user and writable by no one
// else; a lock file beside it makes cold processes log in once between them).  A token read from disk is
// "unchecked" until the client has validated it once with the server
// (needs_check() / checked()): a server whose signing key changed would
// otherwise answer search endpoints with demo data instead of a 401.
//
// Thread-safe.  The token is never logged or put in an exception message.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

namespace vehicledata::client {

class JwtCache {
public:
    using LoginFn = std::function<std::string()>;  // performs the login; throws on failure

    explicit JwtCache(std::string disk_path = {}, int margin_seconds = 300);

    std::string token(const LoginFn& login);
    void invalidate(const std::string& rejected);
    bool has_token() const;
    std::optional<std::int64_t> expires_at() const;  // epoch seconds of the current token
    int logins() const;                               // logins performed by this cache
    // True when `jwt` is the current token, came from the disk file and was
    // not validated with the server yet in this process.
    bool needs_check(const std::string& jwt) const;
    void checked(const std::string& jwt);  // the server accepted it

private:
    bool usable(std::int64_t now) const;  // caller holds mutex_
    void adopt(const std::string& jwt);   // caller holds mutex_
    void load_disk();
    void save_disk() const;
    bool disk_dir_ready() const;  // creates the directory; true when it is private (ours, 0700-ish)

    std::string disk_path_;
    int margin_;
    mutable std::mutex mutex_;   // guards the fields below
    std::mutex login_mutex_;     // one login at a time
    std::string jwt_;
    std::int64_t exp_ = 0;
    std::int64_t iat_ = 0;
    int logins_ = 0;
    bool unchecked_disk_token_ = false;
};

// The claims (exp, iat) of a JWT read without verifying; false if malformed.
bool jwt_times(const std::string& jwt, std::int64_t& exp, std::int64_t& iat);

}  // namespace vehicledata::client
