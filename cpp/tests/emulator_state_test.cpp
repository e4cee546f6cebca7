#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <simdjson.h>

#include "auth.h"
#include "defaults.h"
#include "faults.h"
#include "options.h"
#include "rate_limiter.h"
#include "routes.h"
#include "usage.h"
#include "vehicledata/jwt.h"

namespace emu = vehicledata::emulator;

TEST(EmulatorOptions, ParsesEveryFlagAndRejectsBadOnes) {
    bool help = false;
    auto o = emu::parse_options({"--host", "0.0.0.0", "--port=8080", "--db", "x.db", "--accounts", "a.json",
                                 "--rate-limit", "30", "--login-rate-limit", "3", "--token-ttl", "60",
                                 "--threads", "2", "--jwt-secret", "s", "--maintenance", "--window-seconds", "5"},
                                help);
    EXPECT_FALSE(help);
    EXPECT_EQ(o.host, "0.0.0.0");
    EXPECT_EQ(o.port, 8080);
    EXPECT_EQ(o.db, "x.db");
    EXPECT_EQ(o.accounts_file, "a.json");
    EXPECT_EQ(o.rate_limit, 30);
    EXPECT_EQ(o.login_rate_limit, 3);
    EXPECT_EQ(o.token_ttl, 60);
    EXPECT_EQ(o.threads, 2);
    EXPECT_EQ(o.jwt_secret, "s");
    EXPECT_TRUE(o.maintenance);
    EXPECT_EQ(o.window_seconds, 5);
    EXPECT_THROW(emu::parse_options({"--port", "70000"}, help), emu::OptionsError);
    EXPECT_THROW(emu::parse_options({"--port", "x"}, help), emu::OptionsError);
    EXPECT_THROW(emu::parse_options({"--rate-limit"}, help), emu::OptionsError);
    EXPECT_THROW(emu::parse_options({"--bogus"}, help), emu::OptionsError);
    EXPECT_EQ(emu::parse_options({"--response-cache-mb", "0"}, help).response_cache_mb, 0);
    EXPECT_EQ(emu::parse_options({"--response-cache-mb=512"}, help).response_cache_mb, 512);
    EXPECT_THROW(emu::parse_options({"--response-cache-mb", "-1"}, help), emu::OptionsError);
    EXPECT_EQ(emu::parse_options({"--write-timeout", "120"}, help).write_timeout, 120);
    EXPECT_THROW(emu::parse_options({"--write-timeout", "0"}, help), emu::OptionsError);
    EXPECT_EQ(emu::parse_options({"--max-per-address=3"}, help).max_per_address, 3);
    EXPECT_EQ(emu::parse_options({"--max-per-address", "0"}, help).max_per_address, 0);  // half the cap
    EXPECT_THROW(emu::parse_options({"--max-per-address", "-1"}, help), emu::OptionsError);
    emu::parse_options({"--help"}, help);
    EXPECT_TRUE(help);
}

TEST(EmulatorOptions, SecretsFromFilesAndTheEnvironment) {
    bool help = false;
    const std::string dir = ::testing::TempDir();
    const std::string jwt = dir + "/vd-jwt-secret", token = dir + "/vd-control-token", empty = dir + "/vd-empty";
    std::ofstream(jwt) << "from a file\n";
    std::ofstream(token) << "t0k3n\r\n";
    std::ofstream(empty) << "\n";
    auto o = emu::parse_options({"--jwt-secret-file", jwt, "--control-token-file=" + token}, help);
    EXPECT_EQ(o.jwt_secret, "from a file");  // one line end dropped
    EXPECT_EQ(o.control_token, "t0k3n");
    EXPECT_THROW(emu::parse_options({"--jwt-secret-file", empty}, help), emu::OptionsError);
    EXPECT_THROW(emu::parse_options({"--control-token-file", dir + "/vd-missing"}, help), emu::OptionsError);
    ::setenv(emu::kJwtSecretEnv, "from the environment", 1);
    ::setenv(emu::kControlTokenEnv, "env-token", 1);
    o = emu::parse_options({}, help);
    EXPECT_EQ(o.jwt_secret, "from the environment");
    EXPECT_EQ(o.control_token, "env-token");
    o = emu::parse_options({"--jwt-secret", "flag", "--control-token-file", token}, help);  // flags win
    EXPECT_EQ(o.jwt_secret, "flag");
    EXPECT_EQ(o.control_token, "t0k3n");
    ::unsetenv(emu::kJwtSecretEnv);
    ::unsetenv(emu::kControlTokenEnv);
    EXPECT_EQ(emu::parse_options({}, help).jwt_secret, "");
}

TEST(EmulatorAccounts, DefaultsAndParsing) {
    auto d = emu::default_accounts();
    ASSERT_EQ(d.size(), 3u);
    EXPECT_EQ(d[0].api_token, "demo-premium-token");
    EXPECT_TRUE(d[0].data_feed);
    EXPECT_EQ(d[1].rate_limit_type, "soft");
    EXPECT_FALSE(d[2].subscribed);
    EXPECT_EQ(d[0].id, emu::uuid_from("demo-premium-token"));
    EXPECT_EQ(d[0].id.size(), 36u);
    EXPECT_EQ(d[0].id[14], '4');
    EXPECT_EQ(d[0].name, "premium");
    EXPECT_EQ(d[1].name, "basic");
    EXPECT_EQ(d[2].name, "free");

    auto a = emu::parse_accounts(R"([{"api_token":"t","api_secret":"s","subscribed":true,"rate_limit_type":"soft"}])");
    ASSERT_EQ(a.size(), 1u);
    EXPECT_TRUE(a[0].subscribed);
    EXPECT_FALSE(a[0].data_feed);
    EXPECT_THROW(emu::parse_accounts("{}"), std::runtime_error);
    EXPECT_THROW(emu::parse_accounts(R"([{"api_token":"t"}])"), std::runtime_error);
    EXPECT_THROW(emu::parse_accounts(R"([{"api_token":"t","api_secret":"s","rate_limit_type":"x"}])"), std::runtime_error);
    EXPECT_THROW(emu::parse_accounts(R"([{"api_token":"t","api_secret":"s"},{"api_token":"t","api_secret":"u"}])"),
                 std::runtime_error);
}

TEST(EmulatorDefaults, PrintsTheOptionDefaultsAndTheDemoAccounts) {
    const std::string text = emu::defaults_json();
    simdjson::dom::parser parser;
    simdjson::dom::element doc = parser.parse(simdjson::padded_string(text));
    const emu::Options o;
    simdjson::dom::object opts = doc["options"];
    EXPECT_EQ(std::string_view(opts["host"]), o.host);
    const std::pair<const char*, std::int64_t> numbers[] = {
        {"port", o.port}, {"rate_limit", o.rate_limit}, {"login_rate_limit", o.login_rate_limit},
        {"window_seconds", o.window_seconds}, {"token_ttl", o.token_ttl}, {"threads", o.threads},
        {"compute_workers", o.compute_workers},
        {"max_connections", o.max_connections}, {"max_headers", o.max_headers},
        {"max_header_bytes", o.max_header_bytes}, {"request_timeout", o.request_timeout},
        {"idle_timeout", o.idle_timeout}, {"write_timeout", o.write_timeout},
        {"max_per_address", o.max_per_address}, {"response_cache_mb", o.response_cache_mb}};
    EXPECT_EQ(opts.size(), std::size(numbers) + 1);
    for (const auto& [name, value] : numbers) EXPECT_EQ(std::int64_t(opts[name]), value) << name;
    // The accounts, in the table's order; their values are a valid --accounts file.
    const auto demo = emu::default_accounts();
    simdjson::dom::object accounts = doc["accounts"];
    ASSERT_EQ(accounts.size(), demo.size());
    std::size_t i = 0;
    std::string list = "[";
    for (auto field : accounts) {
        EXPECT_EQ(field.key, demo[i].name);
        EXPECT_EQ(std::string_view(field.value["api_token"]), demo[i].api_token);
        EXPECT_EQ(std::string_view(field.value["api_secret"]), demo[i].api_secret);
        EXPECT_EQ(bool(field.value["subscribed"]), demo[i].subscribed);
        EXPECT_EQ(bool(field.value["data_feed"]), demo[i].data_feed);
        EXPECT_EQ(std::string_view(field.value["rate_limit_type"]), demo[i].rate_limit_type);
        list += (i++ ? "," : "") + simdjson::minify(field.value);
    }
    const auto parsed = emu::parse_accounts(list + "]");
    ASSERT_EQ(parsed.size(), demo.size());
    for (std::size_t k = 0; k < demo.size(); ++k) {
        EXPECT_EQ(parsed[k].id, demo[k].id);
        EXPECT_EQ(parsed[k].rate_limit_type, demo[k].rate_limit_type);
        EXPECT_EQ(parsed[k].name, "");  // loaded accounts have no demo name
    }
}

TEST(EmulatorOptions, PrintDefaultsIsAFlagWithoutValue) {
    bool help = false;
    EXPECT_FALSE(emu::parse_options({}, help).print_defaults);
    EXPECT_TRUE(emu::parse_options({"--print-defaults"}, help).print_defaults);
    EXPECT_THROW(emu::parse_options({"--print-defaults=1"}, help), emu::OptionsError);
    // The usage text shows the struct's defaults.
    EXPECT_NE(emu::usage_text().find("[--rate-limit " + std::to_string(emu::Options().rate_limit) + "]"),
              std::string::npos);
}

TEST(EmulatorAuth, IssuesTokensItAcceptsAndRejectsOthers) {
    emu::Clock clock;
    emu::Auth auth(emu::default_accounts(), "secret", 100, clock);
    const emu::Account* premium = auth.find("demo-premium-token", "demo-premium-secret");
    ASSERT_NE(premium, nullptr);
    EXPECT_EQ(auth.find("demo-premium-token", "wrong"), nullptr);
    std::string token = auth.issue(*premium);
    auto id = auth.identify("Bearer " + token);
    EXPECT_TRUE(id.valid) << id.problem;
    EXPECT_EQ(id.account_id, premium->id);
    EXPECT_TRUE(id.subscribed);
    EXPECT_TRUE(id.data_feed);
    auto free_id = auth.identify("Bearer " + auth.issue(*auth.find("demo-free-token", "demo-free-secret")));
    EXPECT_TRUE(free_id.valid);
    EXPECT_FALSE(free_id.subscribed);

    EXPECT_FALSE(auth.identify("").presented);
    EXPECT_FALSE(auth.identify("Basic abc").valid);
    EXPECT_FALSE(auth.identify("Bearer not.a.jwt").valid);
    emu::Auth other(emu::default_accounts(), "other-secret", 100, clock);
    EXPECT_FALSE(other.identify("Bearer " + token).valid);
    clock.set_offset_seconds(101);
    auto expired = auth.identify("Bearer " + token);
    EXPECT_FALSE(expired.valid);
    EXPECT_EQ(expired.problem, "token expired");
}

// identify() remembers the last token a thread verified: a repeat must still see the clock move
// past exp (and back), another secret, and a token that differs in one character.
TEST(EmulatorAuth, RememberedTokenStillExpiresAndBelongsToItsSecret) {
    emu::Clock clock;
    emu::Auth auth(emu::default_accounts(), "secret", 100, clock);
    const std::string token = auth.issue(*auth.find("demo-premium-token", "demo-premium-secret"));
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(auth.identify("Bearer " + token).valid);
    clock.set_offset_seconds(100);
    EXPECT_EQ(auth.identify("Bearer " + token).problem, "token expired");
    clock.set_offset_seconds(0);
    EXPECT_TRUE(auth.identify("Bearer " + token).valid);
    emu::Auth other(emu::default_accounts(), "other-secret", 100, clock);
    EXPECT_EQ(other.identify("Bearer " + token).problem, "token signature invalid");
    std::string forged = token;
    char& first_sig = forged[forged.rfind('.') + 1];  // the signature's first 6 bits
    first_sig = first_sig == 'A' ? 'B' : 'A';
    EXPECT_FALSE(auth.identify("Bearer " + forged).valid);
    const auto free_id = auth.identify("Bearer " + auth.issue(*auth.find("demo-free-token", "demo-free-secret")));
    EXPECT_TRUE(free_id.valid);
    EXPECT_FALSE(free_id.subscribed);
    EXPECT_TRUE(auth.identify("Bearer " + token).subscribed);
}

TEST(EmulatorLimits, SlidingWindowAllowsLimitThenGivesRetryAfter) {
    emu::RateLimiter lim(60000);
    int retry = 0;
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(lim.hit("a", 3, 1000 + i * 1000, retry));
    EXPECT_FALSE(lim.hit("a", 3, 4000, retry));
    EXPECT_EQ(retry, 57);  // the first hit (t=1s) leaves the window at t=61s
    EXPECT_TRUE(lim.hit("b", 3, 4000, retry));  // keys are separate
    EXPECT_TRUE(lim.hit("a", 3, 61001, retry));
    EXPECT_FALSE(lim.hit("a", 3, 61002, retry));
    lim.reset();
    EXPECT_TRUE(lim.hit("a", 3, 61003, retry));
}

TEST(EmulatorUsage, CountsPerAccountAndUtcMinus5Day) {
    emu::UsageCounters u;
    const std::int64_t jan1_noon = 1672592400;  // 2023-01-01 17:00 UTC
    u.count("x", jan1_noon);
    u.count("x", jan1_noon + 1);
    u.count("x", 1672549199);   // 2022-12-31 23:59:59 UTC-5
    u.count("y", jan1_noon);
    EXPECT_EQ(u.today("x", jan1_noon), 2);
    EXPECT_EQ(u.today("y", jan1_noon), 1);
    EXPECT_EQ(u.today("z", jan1_noon), 0);
    auto days = u.since_last_month("x", jan1_noon);
    ASSERT_EQ(days.size(), 2u);
    EXPECT_EQ(days[0].first, "2022-12-31");
    EXPECT_EQ(days[0].second, 1);
    EXPECT_EQ(days[1].first, "2023-01-01");
    // Two months later the December day is out of range.
    EXPECT_TRUE(u.since_last_month("x", jan1_noon + 62LL * 86400).empty());
    u.reset();
    EXPECT_EQ(u.today("x", jan1_noon), 0);
}

TEST(EmulatorFaults, ParseTakeAndExpire) {
    auto f = emu::parse_fault(R"({"path":"/api/trims","count":2,"status":429,"retry_after":3})");
    EXPECT_EQ(f.status, 429);
    EXPECT_EQ(f.retry_after, 3);
    EXPECT_EQ(f.action, emu::FaultAction::Status);
    EXPECT_THROW(emu::parse_fault(R"({"count":1})"), std::invalid_argument);
    EXPECT_THROW(emu::parse_fault(R"({"path":"x"})"), std::invalid_argument);
    EXPECT_THROW(emu::parse_fault(R"({"path":"/a","action":"explode"})"), std::invalid_argument);
    EXPECT_THROW(emu::parse_fault(R"({"path":"/a","status":99})"), std::invalid_argument);
    EXPECT_THROW(emu::parse_fault(R"({"path":"/a","action":"delay"})"), std::invalid_argument);
    EXPECT_THROW(emu::parse_fault(R"({"path":"/a","colour":1})"), std::invalid_argument);
    EXPECT_THROW(emu::parse_fault("not json"), std::invalid_argument);
    emu::Faults faults;
    faults.add(f);
    EXPECT_FALSE(faults.take("/api/makes").has_value());
    EXPECT_TRUE(faults.take("/api/trims/v2").has_value());
    EXPECT_TRUE(faults.take("/api/trims").has_value());
    EXPECT_FALSE(faults.take("/api/trims").has_value());
}

TEST(EmulatorRoutes, MatchesKnownPathsOnly) {
    auto r = emu::match_route("/api/trims/v2");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->kind, vehicledata::schema::Kind::Search);
    ASSERT_NE(r->endpoint, nullptr);
    EXPECT_EQ(r->endpoint->path, "/api/trims/v2");
    r = emu::match_route("/api/trims/v2/123");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->kind, vehicledata::schema::Kind::Detail);
    EXPECT_EQ(r->endpoint->path, "/api/trims/v2/{id}");
    EXPECT_EQ(r->arg, "123");
    r = emu::match_route("/api/trims/9");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->kind, vehicledata::schema::Kind::Detail);
    EXPECT_EQ(r->endpoint->path, "/api/trims/{id}");
    EXPECT_EQ(r->arg, "9");
    r = emu::match_route("/api/auth/login");
    ASSERT_TRUE(r);
    EXPECT_STREQ(r->method, "POST");
    EXPECT_TRUE(r->text_errors);
    EXPECT_FALSE(emu::match_route("/api/trims/v2/1/2"));
    EXPECT_FALSE(emu::match_route("/api/unknown"));
    EXPECT_FALSE(emu::match_route("/"));
}

TEST(EmulatorRoutes, EveryEndpointOfTheSchemaIsRouted) {
    namespace sc = vehicledata::schema;
    int n = 0;
    for (const auto& e : sc::endpoints()) {
        const std::string_view param = sc::path_parameter(e);
        std::string path = e.path;
        if (!param.empty()) path.replace(path.find('{'), param.size() + 2, "X1");
        auto r = emu::match_route(path);
        ASSERT_TRUE(r) << path;
        EXPECT_EQ(r->endpoint, &e) << path;
        EXPECT_EQ(r->kind, e.kind) << path;
        EXPECT_EQ(std::string(r->method), e.method) << path;
        EXPECT_EQ(r->text_errors, e.text_errors) << path;
        EXPECT_EQ(r->arg, param.empty() ? "" : "X1") << path;
        ++n;
    }
    EXPECT_EQ(n, static_cast<int>(sc::endpoints().size()));
}

TEST(EmulatorRoutes, DedupeKeepsFirstPlaceAndLastValue) {
    auto ps = emu::dedupe_params({{"year", "1"}, {"make", "a"}, {"year", "2"}});
    ASSERT_EQ(ps.size(), 2u);
    EXPECT_EQ(ps[0].name, "year");
    EXPECT_EQ(ps[0].value, "2");
}
