// Secret scrubbing: see vehicledata/client/redact.h.
#include "vehicledata/client/redact.h"

#include <algorithm>
#include <deque>
#include <mutex>

namespace vehicledata::client {

namespace {

constexpr std::size_t kKept = 64;

std::mutex& secrets_mutex() {
    static std::mutex m;
    return m;
}

std::deque<std::string>& secrets() {
    static std::deque<std::string> s;
    return s;
}

}  // namespace

void remember_secret(const std::string& secret) {
    if (secret.size() < 8) return;
    std::lock_guard<std::mutex> lk(secrets_mutex());
    auto& s = secrets();
    if (std::find(s.begin(), s.end(), secret) != s.end()) return;
    s.push_back(secret);
    if (s.size() > kKept) s.pop_front();
}

std::string redact(std::string text) {
    std::lock_guard<std::mutex> lk(secrets_mutex());
    for (const auto& secret : secrets()) {
        for (auto at = text.find(secret); at != std::string::npos; at = text.find(secret, at + 3))
            text.replace(at, secret.size(), "***");
    }
    return text;
}

}  // namespace vehicledata::client
