// The client's on-disk response cache (vehicledata/client/response_cache.h): keys, tiers,
// files, corrupt entries and the LRU bound, on a temporary directory.
#include <gtest/gtest.h>

#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include "vehicledata/client/response_cache.h"

namespace vc = vehicledata::client;

namespace {

std::string temp_dir() {
    char tmpl[] = "/tmp/vd_response_cache_XXXXXX";
    const char* d = ::mkdtemp(tmpl);
    return d ? std::string(d) + "/cache" : std::string();
}

vc::Response answer(const std::string& body) {
    vc::Response r;
    r.status = 200;
    r.body = body;
    r.content_type = "application/json";
    r.url = "http://h/api/trims/v2?year=2020";
    return r;
}

int files_in(const std::string& dir) {
    int n = 0;
    if (DIR* d = ::opendir(dir.c_str())) {
        while (dirent* e = ::readdir(d)) n += std::string(e->d_name).size() > 4 && std::string(e->d_name).find(".vdc") != std::string::npos;
        ::closedir(d);
    }
    return n;
}

}  // namespace

TEST(ClientResponseCache, CanonicalUrlOrdersTheQueryByName) {
    EXPECT_EQ(vc::ResponseCache::canonical_url("HTTP://Host:8/api/Trims?year=2020&make=Honda&limit=5"),
              "http://host:8/api/Trims?limit=5&make=Honda&year=2020");
    EXPECT_EQ(vc::ResponseCache::canonical_url("http://h/p?b=2&a=1&b=1"), "http://h/p?a=1&b=2&b=1");  // repeats keep order
    EXPECT_EQ(vc::ResponseCache::canonical_url("http://h/p"), "http://h/p");
}

TEST(ClientResponseCache, StoresAndServesPerTier) {
    const std::string dir = temp_dir();
    vc::ResponseCache account({dir, 3600, 1 << 20}, "account abc");
    vc::ResponseCache anonymous({dir, 3600, 1 << 20}, "anonymous");
    const std::string url = "http://h/api/trims/v2?year=2020&make=Honda";
    EXPECT_FALSE(account.lookup("GET", url));
    ASSERT_TRUE(account.store("GET", url, answer("{\"data\":[]}")));
    auto hit = account.lookup("GET", "http://h/api/trims/v2?make=Honda&year=2020");
    ASSERT_TRUE(hit);
    EXPECT_EQ(hit->body, "{\"data\":[]}");
    EXPECT_EQ(hit->status, 200);
    EXPECT_EQ(hit->content_type, "application/json");
    EXPECT_GE(hit->body.capacity(), hit->body.size() + 64);  // room for the page decoder's padding
    EXPECT_FALSE(anonymous.lookup("GET", url));  // another tier, another entry
    EXPECT_FALSE(account.lookup("HEAD", url));
    struct stat sb;
    ASSERT_EQ(::stat(account.path_for("GET", url).c_str(), &sb), 0);
    EXPECT_EQ(sb.st_mode & 0777, 0600u);
    ASSERT_EQ(::stat(dir.c_str(), &sb), 0);
    EXPECT_EQ(sb.st_mode & 0777, 0700u);
}

TEST(ClientResponseCache, ErrorsAndOversizedAnswersAreNotStored) {
    const std::string dir = temp_dir();
    vc::ResponseCache cache({dir, 3600, 200}, "anonymous");
    vc::Response r = answer("x");
    r.status = 503;
    EXPECT_FALSE(cache.store("GET", "http://h/a", r));
    EXPECT_FALSE(cache.store("GET", "http://h/b", answer(std::string(500, 'x'))));  // over max_bytes alone
    EXPECT_EQ(files_in(dir), 0);
}

TEST(ClientResponseCache, ACorruptFileIsAMissAndIsDeleted) {
    const std::string dir = temp_dir();
    vc::ResponseCache cache({dir, 3600, 1 << 20}, "anonymous");
    const std::string url = "http://h/api/makes/v2";
    for (const std::string bad : {"", "garbage", "vehicledata-response-cache 1\ntier anonymous\n"}) {
        ASSERT_TRUE(cache.store("GET", url, answer("[1,2,3]")));
        { std::ofstream(cache.path_for("GET", url), std::ios::trunc) << bad; }
        EXPECT_FALSE(cache.lookup("GET", url));
        struct stat sb;
        EXPECT_NE(::stat(cache.path_for("GET", url).c_str(), &sb), 0);
    }
    // a body shorter than announced (a torn write by something else)
    ASSERT_TRUE(cache.store("GET", url, answer("[1,2,3]")));
    std::string text;
    { std::ifstream in(cache.path_for("GET", url)); text.assign(std::istreambuf_iterator<char>(in), {}); }
    { std::ofstream(cache.path_for("GET", url), std::ios::trunc) << text.substr(0, text.size() - 2); }
    EXPECT_FALSE(cache.lookup("GET", url));
}

TEST(ClientResponseCache, AnExpiredAnswerIsAMiss) {
    const std::string dir = temp_dir();
    vc::ResponseCache cache({dir, 1, 1 << 20}, "anonymous");
    ASSERT_TRUE(cache.store("GET", "http://h/a", answer("[]")));
    EXPECT_TRUE(cache.lookup("GET", "http://h/a"));
    ::sleep(2);
    EXPECT_FALSE(cache.lookup("GET", "http://h/a"));
    vc::ResponseCache forever({dir, 0, 1 << 20}, "anonymous");  // ttl <= 0: until evicted
    EXPECT_TRUE(forever.lookup("GET", "http://h/a"));
}

TEST(ClientResponseCache, TheLeastRecentlyUsedGoFirstPastMaxBytes) {
    const std::string dir = temp_dir();
    const std::string body(300, 'x');
    vc::ResponseCache probe({dir, 3600, 0}, "anonymous");
    ASSERT_TRUE(probe.store("GET", "http://h/size", answer(body)));
    struct stat sb;
    ASSERT_EQ(::stat(probe.path_for("GET", "http://h/size").c_str(), &sb), 0);
    ::unlink(probe.path_for("GET", "http://h/size").c_str());
    const auto one = static_cast<std::int64_t>(sb.st_size);
    vc::ResponseCache cache({dir, 3600, one * 3}, "anonymous");
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(cache.store("GET", "http://h/" + std::to_string(i), answer(body)));
    ::usleep(20000);
    EXPECT_TRUE(cache.lookup("GET", "http://h/0"));  // used: now the most recent
    ::usleep(20000);
    ASSERT_TRUE(cache.store("GET", "http://h/3", answer(body)));  // past the bound: the oldest go
    EXPECT_LE(files_in(dir) * one, one * 3);
    EXPECT_TRUE(cache.lookup("GET", "http://h/0"));
    EXPECT_TRUE(cache.lookup("GET", "http://h/3"));
    EXPECT_FALSE(cache.lookup("GET", "http://h/1"));
}

TEST(ClientResponseCache, AnUnusableDirectoryIsAMissNotAnError) {
    vc::ResponseCache cache({"/proc/self/no/such/dir", 3600, 1 << 20}, "anonymous");
    EXPECT_FALSE(cache.store("GET", "http://h/a", answer("[]")));
    EXPECT_FALSE(cache.lookup("GET", "http://h/a"));
    vc::ResponseCache off({"", 3600, 1 << 20}, "anonymous");
    EXPECT_FALSE(off.enabled());
    EXPECT_FALSE(off.store("GET", "http://h/a", answer("[]")));
}
