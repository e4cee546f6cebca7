// JWT cache: see vehicledata/client/jwt_cache.h.
#include "vehicledata/client/jwt_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <sstream>
#include <thread>

#include "vehicledata/jwt.h"
#include "vehicledata/client/redact.h"

namespace vehicledata::client {

namespace {

std::int64_t now_epoch() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void make_dirs(const std::string& dir) {
    if (dir.empty()) return;
    std::string cur;
    std::stringstream ss(dir);
    std::string part;
    if (dir[0] == '/') cur = "/";
    while (std::getline(ss, part, '/')) {
        if (part.empty()) continue;
        cur += part + "/";
        ::mkdir(cur.c_str(), 0700);
    }
}

// The cache directory is ours alone: a real directory (not a link), owned by
// this user, writable by no one else.  Anything else turns the disk cache off.
bool private_dir(const std::string& dir) {
    struct stat sb;
    if (::lstat(dir.c_str(), &sb) != 0) return false;
    return S_ISDIR(sb.st_mode) && sb.st_uid == ::geteuid() && (sb.st_mode & 022) == 0;
}

std::string dir_of(const std::string& path) {
    auto slash = path.rfind('/');
    return slash == std::string::npos ? std::string(".") : (slash == 0 ? std::string("/") : path.substr(0, slash));
}

// An exclusive lock on `path` (created 0600, never through a link), or -1.
// Waits up to 30 s for another process's login.
int lock_file(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return -1;
    for (int i = 0; i < 300; ++i) {
        if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return fd;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ::close(fd);
    return -1;
}

}  // namespace

bool jwt_times(const std::string& jwt, std::int64_t& exp, std::int64_t& iat) {
    auto payload = vehicledata::jwt::payload_unverified(jwt);
    if (!payload) return false;
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    if (parser.parse(*payload).get(doc)) return false;
    std::int64_t e = 0, i = 0;
    if (doc["exp"].get_int64().get(e)) return false;
    if (doc["iat"].get_int64().get(i)) i = 0;
    exp = e;
    iat = i;
    return true;
}

JwtCache::JwtCache(std::string disk_path, int margin_seconds)
    : disk_path_(std::move(disk_path)), margin_(std::max(0, margin_seconds)) {
    load_disk();
}

bool JwtCache::usable(std::int64_t now) const {
    if (jwt_.empty()) return false;
    std::int64_t lifetime = iat_ > 0 && exp_ > iat_ ? exp_ - iat_ : 0;
    std::int64_t margin = margin_;
    if (lifetime > 0) margin = std::min<std::int64_t>(margin, lifetime / 4);
    return now + margin < exp_;
}

void JwtCache::adopt(const std::string& jwt) {
    unchecked_disk_token_ = false;
    std::int64_t e = 0, i = 0;
    if (!jwt_times(jwt, e, i)) {
        // A token without a readable exp: keep it for one hour at most.
        e = now_epoch() + 3600;
        i = now_epoch();
    }
    jwt_ = jwt;
    exp_ = e;
    iat_ = i;
    remember_secret(jwt);
}

std::string JwtCache::token(const LoginFn& login) {
    {
        std::lock_guard<std::mutex> lk(mutex_);
        if (usable(now_epoch())) return jwt_;
    }
    std::lock_guard<std::mutex> single(login_mutex_);
    {
        std::lock_guard<std::mutex> lk(mutex_);
        if (usable(now_epoch())) return jwt_;  // another thread logged in meanwhile
    }
    // Across processes: one login for all that start cold at once (a lock file
    // beside the cache; whoever waited reads the token the first one wrote).
    int lock = -1;
    if (!disk_path_.empty() && disk_dir_ready()) {
        lock = lock_file(disk_path_ + ".lock");
        load_disk();
        std::lock_guard<std::mutex> lk(mutex_);
        if (usable(now_epoch())) {
            if (lock >= 0) ::close(lock);
            return jwt_;
        }
    }
    std::string fresh;
    try {
        fresh = login();
    } catch (...) {
        if (lock >= 0) ::close(lock);
        throw;
    }
    std::lock_guard<std::mutex> lk(mutex_);
    adopt(fresh);
    ++logins_;
    save_disk();
    if (lock >= 0) ::close(lock);  // releases the flock
    return jwt_;
}

bool JwtCache::disk_dir_ready() const {
    std::string dir = dir_of(disk_path_);
    make_dirs(dir);
    return private_dir(dir);
}

void JwtCache::invalidate(const std::string& rejected) {
    std::lock_guard<std::mutex> lk(mutex_);
    if (jwt_ == rejected) {
        unchecked_disk_token_ = false;
        jwt_.clear();
        exp_ = iat_ = 0;
        if (!disk_path_.empty()) std::remove(disk_path_.c_str());
    }
}

bool JwtCache::has_token() const {
    std::lock_guard<std::mutex> lk(mutex_);
    return !jwt_.empty();
}

std::optional<std::int64_t> JwtCache::expires_at() const {
    std::lock_guard<std::mutex> lk(mutex_);
    if (jwt_.empty()) return std::nullopt;
    return exp_;
}

bool JwtCache::needs_check(const std::string& jwt) const {
    std::lock_guard<std::mutex> lk(mutex_);
    return unchecked_disk_token_ && jwt == jwt_;
}

void JwtCache::checked(const std::string& jwt) {
    std::lock_guard<std::mutex> lk(mutex_);
    if (jwt == jwt_) unchecked_disk_token_ = false;
}

int JwtCache::logins() const {
    std::lock_guard<std::mutex> lk(mutex_);
    return logins_;
}

void JwtCache::load_disk() {
    if (disk_path_.empty() || !private_dir(dir_of(disk_path_))) return;
    int fd = ::open(disk_path_.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return;
    struct stat sb;
    char buf[8193];
    ssize_t n = -1;
    // Only a small regular file of ours that no one else can read or write.
    if (::fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_uid == ::geteuid() && (sb.st_mode & 077) == 0)
        n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (n <= 0) return;
    std::string jwt(buf, static_cast<std::size_t>(n));
    jwt = jwt.substr(0, jwt.find('\n'));
    std::lock_guard<std::mutex> lk(mutex_);
    std::int64_t e = 0, i = 0;
    if (!jwt::well_formed(jwt) || !jwt_times(jwt, e, i)) return;
    if (jwt == jwt_) return;  // already ours
    remember_secret(jwt);
    jwt_ = jwt;
    exp_ = e;
    iat_ = i;
    unchecked_disk_token_ = true;
    if (!usable(now_epoch())) {
        jwt_.clear();
        exp_ = iat_ = 0;
        unchecked_disk_token_ = false;
    }
}

void JwtCache::save_disk() const {
    if (disk_path_.empty() || !disk_dir_ready()) return;
    // A fresh temp file that cannot be a planted link (O_EXCL|O_NOFOLLOW, an
    // unpredictable name), made 0600 through its descriptor, then renamed.
    std::random_device rd;
    int fd = -1;
    std::string tmp;
    for (int attempt = 0; attempt < 8 && fd < 0; ++attempt) {
        tmp = disk_path_ + ".tmp" + std::to_string(::getpid()) + "." + std::to_string(rd());
        fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    }
    if (fd < 0) return;  // the disk cache is best effort
    bool ok = ::fchmod(fd, 0600) == 0;
    std::string line = jwt_ + "\n";
    ok = ok && ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
    ::close(fd);
    if (!ok || std::rename(tmp.c_str(), disk_path_.c_str()) != 0) std::remove(tmp.c_str());
}

}  // namespace vehicledata::client
