// Retry policy helpers: see vehicledata/client/retry.h.
#include "vehicledata/client/retry.h"
#include "vehicledata/format.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace vehicledata::client {

void validate(const RetryPolicy& p) {
    if (p.total < 0) throw std::invalid_argument("Retry.total must be >= 0, not " + std::to_string(p.total));
    const std::pair<const char*, double> numbers[] = {{"backoff_factor", p.backoff_factor},
                                                      {"backoff_max", p.backoff_max},
                                                      {"backoff_jitter", p.backoff_jitter},
                                                      {"max_wait", p.max_wait}};
    for (const auto& [name, value] : numbers) {
        if (!(value >= 0)) {
            char buf[64];
            std::snprintf(buf, sizeof buf, "%g", value);
            throw std::invalid_argument(std::string("Retry.") + name + " must be >= 0, not " + buf);
        }
    }
}

double backoff_seconds(const RetryPolicy& policy, int retry) {
    if (retry < 1 || policy.backoff_factor <= 0) return 0.0;
    double v = policy.backoff_factor * std::pow(2.0, retry - 1);
    return std::min(v, policy.backoff_max);
}

namespace {

double random_jitter(double max) {
    if (max <= 0) return 0;
    thread_local std::mt19937 rng{std::random_device{}()};
    return std::uniform_real_distribution<double>(0.0, max)(rng);
}

std::int64_t system_epoch() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

int month_index(std::string_view m) {
    static const char* names[] = {"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"};
    if (m.size() < 3) return -1;
    for (int i = 0; i < 12; ++i) {
        bool eq = true;
        for (int k = 0; k < 3; ++k)
            if (std::tolower(static_cast<unsigned char>(m[k])) != names[i][k]) eq = false;
        if (eq) return i;
    }
    return -1;
}


std::vector<std::string_view> tokens(std::string_view s) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && (s[i] == ' ' || s[i] == ',' || s[i] == '-')) ++i;
        std::size_t j = i;
        while (j < s.size() && s[j] != ' ' && s[j] != ',' && s[j] != '-') ++j;
        if (j > i) out.push_back(s.substr(i, j - i));
        i = j;
    }
    return out;
}

bool all_digits(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

}  // namespace

bool WaitBudget::draw(double delay, double max_wait) {
    std::lock_guard<std::mutex> lk(mutex_);
    if (waited_ + delay > max_wait) return false;
    waited_ += delay;
    return true;
}

double WaitBudget::waited() const {
    std::lock_guard<std::mutex> lk(mutex_);
    return waited_;
}

RetryState::RetryState(const RetryPolicy& policy, double (*jitter_source)(double), WaitBudget* budget)
    : policy_(policy), jitter_(jitter_source ? jitter_source : &random_jitter), budget_(budget) {}

RetryDecision RetryState::approve(RetryDecision d) {
    // max_wait caps the total of the sleeps of this request, not each one: three Retry-After: 60
    // answers under the default 120 s give up at the third instead of sleeping 180 s.
    // With the call's budget, the sleeps of all of the call's requests count together.
    d.past_max_wait = waited_ + d.delay > policy_.max_wait || (budget_ && !budget_->draw(d.delay, policy_.max_wait));
    d.retry = !d.past_max_wait;
    if (d.retry) waited_ += d.delay;
    return d;
}

RetryDecision RetryState::backoff(std::string reason) {
    RetryDecision d;
    d.reason = std::move(reason);
    if (retries_ >= policy_.total) return d;
    d.number = ++retries_;
    d.delay = backoff_seconds(policy_, d.number) + (policy_.backoff_jitter > 0 ? jitter_(policy_.backoff_jitter) : 0.0);
    return approve(d);
}

RetryDecision RetryState::transfer_failed(const std::string& error) {
    if (!policy_.retry_transport_errors) return RetryDecision{false, false, 0, retries_, error};
    return backoff(error);
}

RetryDecision RetryState::decode_failed(const std::string& error) {
    if (!policy_.retry_transport_errors)
        return RetryDecision{false, false, 0, retries_, "a body that did not decode: " + error};
    return backoff("a body that did not decode: " + error);
}

RetryDecision RetryState::status(long status, std::string_view retry_after, std::int64_t now_epoch) {
    const std::string what = "HTTP " + std::to_string(status);
    if (!policy_.status_forcelist.count(static_cast<int>(status))) return RetryDecision{false, false, 0, retries_, what};
    std::optional<double> ra;
    if (policy_.respect_retry_after && !retry_after.empty())
        ra = parse_retry_after(retry_after, now_epoch < 0 ? system_epoch() : now_epoch);
    if (!ra) return backoff(what);
    RetryDecision d;
    d.reason = what + " (Retry-After " + std::string(retry_after) + ")";
    if (retries_ >= policy_.total) return d;
    d.number = ++retries_;
    d.delay = *ra;
    return approve(d);
}

bool RetryState::renew_token() {
    if (renewed_) return false;
    renewed_ = true;
    return true;
}

std::optional<std::int64_t> parse_http_date(std::string_view value) {
    // Accepts "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT",
    // "Sun Nov  6 08:49:37 1994".
    auto t = tokens(value);
    int day = -1, month = -1, hh = -1, mm = -1, ss = -1;
    std::int64_t year = -1;
    for (auto tok : t) {
        if (tok.find(':') != std::string_view::npos) {
            if (tok.size() != 8 || tok[2] != ':' || tok[5] != ':') return std::nullopt;
            hh = std::atoi(std::string(tok.substr(0, 2)).c_str());
            mm = std::atoi(std::string(tok.substr(3, 2)).c_str());
            ss = std::atoi(std::string(tok.substr(6, 2)).c_str());
        } else if (all_digits(tok)) {
            int v = std::atoi(std::string(tok).c_str());
            if (tok.size() <= 2 && day < 0) day = v;
            else if (tok.size() == 4 || (tok.size() == 2 && day >= 0)) year = tok.size() == 2 ? (v < 70 ? 2000 + v : 1900 + v) : v;
            else return std::nullopt;
        } else if (month < 0 && month_index(tok) >= 0 && tok.size() == 3) {
            month = month_index(tok);
        }
    }
    if (day < 1 || day > 31 || month < 0 || year < 0 || hh < 0 || hh > 23 || mm < 0 || mm > 59 || ss < 0 || ss > 60)
        return std::nullopt;
    return format::days_from_civil(static_cast<int>(year), static_cast<unsigned>(month + 1), static_cast<unsigned>(day)) * 86400 + hh * 3600 +
           mm * 60 + ss;
}

std::optional<double> parse_retry_after(std::string_view value, std::int64_t now_epoch) {
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
    if (value.empty()) return std::nullopt;
    bool numeric = std::all_of(value.begin(), value.end(),
                               [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; });
    if (numeric) {
        char* end = nullptr;
        std::string s(value);
        double v = std::strtod(s.c_str(), &end);
        if (end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
        return std::max(0.0, v);
    }
    auto when = parse_http_date(value);
    if (!when) return std::nullopt;
    return std::max<double>(0.0, static_cast<double>(*when - now_epoch));
}

}  // namespace vehicledata::client
