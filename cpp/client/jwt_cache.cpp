// JWT cache: see vehicledata/client/jwt_cache.h.
#include "vehicledata/client/jwt_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "vehicledata/jwt.h"

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
    std::string fresh = login();
    std::lock_guard<std::mutex> lk(mutex_);
    adopt(fresh);
    ++logins_;
    save_disk();
    return jwt_;
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
    if (disk_path_.empty()) return;
    std::ifstream in(disk_path_);
    if (!in) return;
    std::string jwt;
    std::getline(in, jwt);
    std::lock_guard<std::mutex> lk(mutex_);
    std::int64_t e = 0, i = 0;
    if (jwt.empty() || !jwt_times(jwt, e, i)) return;
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
    if (disk_path_.empty()) return;
    auto slash = disk_path_.rfind('/');
    if (slash != std::string::npos) make_dirs(disk_path_.substr(0, slash));
    std::string tmp = disk_path_ + ".tmp" + std::to_string(::getpid());
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return;  // the disk cache is best effort
    ::fchmod(fd, 0600);
    std::string line = jwt_ + "\n";
    bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
    ::close(fd);
    if (!ok || std::rename(tmp.c_str(), disk_path_.c_str()) != 0) std::remove(tmp.c_str());
}

}  // namespace vehicledata::client
