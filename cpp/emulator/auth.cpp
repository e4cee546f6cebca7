// Accounts, login tokens and JWT checks.
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <simdjson.h>
#include <sstream>
#include <stdexcept>

#include "auth.h"
#include "vehicledata/format.h"
#include "vehicledata/jwt.h"

namespace vehicledata::emulator {

std::int64_t Clock::now_ms() const {
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count() + offset_ms_.load();
}

namespace {
std::string uuid_of(const unsigned char* b) {
    unsigned char u[16];
    for (int i = 0; i < 16; ++i) u[i] = b[i];
    u[6] = static_cast<unsigned char>((u[6] & 0x0f) | 0x40);
    u[8] = static_cast<unsigned char>((u[8] & 0x3f) | 0x80);
    char buf[40];
    std::snprintf(buf, sizeof buf, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
                  u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    return buf;
}

Account make_account(std::string token, std::string secret, bool subscribed, bool data_feed, std::string type) {
    Account a;
    a.api_token = std::move(token);
    a.api_secret = std::move(secret);
    a.subscribed = subscribed;
    a.data_feed = data_feed;
    a.rate_limit_type = std::move(type);
    a.id = uuid_from(a.api_token);
    return a;
}
}  // namespace

std::string uuid_from(std::string_view text) {
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
    return uuid_of(digest);
}

std::string random_uuid() {
    unsigned char b[16];
    if (RAND_bytes(b, sizeof b) != 1) throw std::runtime_error("RAND_bytes failed");
    return uuid_of(b);
}

std::vector<Account> default_accounts() {
    return {make_account("demo-premium-token", "demo-premium-secret", true, true, "hard"),
            make_account("demo-basic-token", "demo-basic-secret", true, false, "soft"),
            make_account("demo-free-token", "demo-free-secret", false, false, "hard")};
}

std::vector<Account> parse_accounts(std::string_view json_text) {
    simdjson::dom::parser parser;
    simdjson::padded_string padded(json_text);
    simdjson::dom::element root;
    if (auto err = parser.parse(padded).get(root))
        throw std::runtime_error(std::string("accounts: not valid JSON: ") + simdjson::error_message(err));
    simdjson::dom::array list;
    if (root.get_array().get(list)) throw std::runtime_error("accounts: expected a JSON list of account objects");
    std::vector<Account> out;
    std::size_t index = 0;
    for (simdjson::dom::element item : list) {
        const std::string where = "accounts[" + std::to_string(index++) + "]";
        simdjson::dom::object obj;
        if (item.get_object().get(obj)) throw std::runtime_error(where + ": expected an object");
        std::string_view token, secret, type = "hard";
        bool subscribed = false, feed = false;
        if (obj["api_token"].get_string().get(token) || token.empty())
            throw std::runtime_error(where + ": api_token must be a non-empty string");
        if (obj["api_secret"].get_string().get(secret) || secret.empty())
            throw std::runtime_error(where + ": api_secret must be a non-empty string");
        if (auto f = obj["subscribed"]; f.error() != simdjson::NO_SUCH_FIELD && f.get_bool().get(subscribed))
            throw std::runtime_error(where + ": subscribed must be true or false");
        if (auto f = obj["data_feed"]; f.error() != simdjson::NO_SUCH_FIELD && f.get_bool().get(feed))
            throw std::runtime_error(where + ": data_feed must be true or false");
        if (auto f = obj["rate_limit_type"]; f.error() != simdjson::NO_SUCH_FIELD) {
            if (f.get_string().get(type) || (type != "hard" && type != "soft"))
                throw std::runtime_error(where + ": rate_limit_type must be \"hard\" or \"soft\"");
        }
        for (const auto& a : out)
            if (a.api_token == token) throw std::runtime_error(where + ": duplicate api_token");
        out.push_back(make_account(std::string(token), std::string(secret), subscribed, feed, std::string(type)));
    }
    return out;
}

std::vector<Account> load_accounts(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read accounts file " + path);
    std::ostringstream ss;
    ss << in.rdbuf();
    try {
        return parse_accounts(ss.str());
    } catch (const std::runtime_error& e) {
        throw std::runtime_error(path + ": " + e.what());
    }
}

Auth::Auth(std::vector<Account> accounts, std::string secret, std::int64_t ttl, const Clock& clock)
    : accounts_(std::move(accounts)), secret_(std::move(secret)), ttl_(ttl), clock_(clock) {}

const Account* Auth::find(std::string_view token, std::string_view secret) const {
    for (const auto& a : accounts_)
        if (a.api_token == token && a.api_secret == secret) return &a;
    return nullptr;
}

std::string Auth::issue(const Account& a) const {
    const std::int64_t iat = clock_.now_seconds();
    std::string p;
    p.reserve(320);
    p.append("{\"iss\":\"carapi.app\",\"sub\":");
    format::append_json_string(p, a.id, format::JsonEscape::Plain);
    p.append(",\"aud\":");
    format::append_json_string(p, a.id, format::JsonEscape::Plain);
    p.append(",\"exp\":");
    format::append_int(p, iat + ttl_);
    p.append(",\"iat\":");
    format::append_int(p, iat);
    p.append(",\"jti\":");
    format::append_json_string(p, random_uuid(), format::JsonEscape::Plain);
    p.append(",\"user\":{\"subscriptions\":");
    p.append(a.subscribed ? "[\"premium\"]" : "[]");
    p.append(",\"rate_limit_type\":");
    format::append_json_string(p, a.rate_limit_type, format::JsonEscape::Plain);
    p.append(",\"addons\":{\"antique_vehicles\":");
    p.append(a.subscribed ? "true" : "false");
    p.append(",\"data_feed\":");
    p.append(a.data_feed ? "true" : "false");
    p.append("}}}");
    return jwt::sign_hs256(p, secret_);
}

Identity Auth::identify(std::string_view header) const {
    Identity id;
    if (header.empty()) return id;
    id.presented = true;
    constexpr std::string_view kBearer = "bearer ";
    auto lower_eq = [](std::string_view a, std::string_view b) {
        if (a.size() != b.size()) return false;
        for (std::size_t i = 0; i < a.size(); ++i)
            if (std::tolower(static_cast<unsigned char>(a[i])) != b[i]) return false;
        return true;
    };
    if (header.size() <= kBearer.size() || !lower_eq(header.substr(0, kBearer.size()), kBearer)) {
        id.problem = "Authorization header is not 'Bearer <token>'";
        return id;
    }
    std::string_view token = header.substr(kBearer.size());
    while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
    while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
    std::string payload;
    switch (jwt::verify_hs256(token, secret_, clock_.now_seconds(), &payload)) {
        case jwt::VerifyResult::Ok: break;
        case jwt::VerifyResult::Expired: id.problem = "token expired"; return id;
        case jwt::VerifyResult::BadSignature: id.problem = "token signature invalid"; return id;
        case jwt::VerifyResult::BadAlgorithm: id.problem = "token algorithm not accepted"; return id;
        default: id.problem = "token malformed"; return id;
    }
    simdjson::dom::parser parser;
    simdjson::padded_string padded(payload);
    simdjson::dom::element root;
    std::string_view sub;
    if (parser.parse(padded).get(root) || root["sub"].get_string().get(sub) || sub.empty()) {
        id.problem = "token claims malformed";
        return id;
    }
    id.valid = true;
    id.account_id = std::string(sub);
    simdjson::dom::array subs;
    if (!root.at_pointer("/user/subscriptions").get_array().get(subs)) id.subscribed = subs.size() > 0;
    bool feed = false;
    if (!root.at_pointer("/user/addons/data_feed").get_bool().get(feed)) id.data_feed = feed;
    return id;
}

}  // namespace vehicledata::emulator
