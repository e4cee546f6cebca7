// The response cache (cpp/emulator/response_cache.h): hits, stale generations, the byte bound and
// least-recently-used eviction, clear, the statistics, capacity 0.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "response_cache.h"

namespace emu = vehicledata::emulator;

namespace {

std::shared_ptr<const emu::CachedResponse> entry(std::size_t size, std::uint64_t generation = 1) {
    auto e = std::make_shared<emu::CachedResponse>();
    e->body.assign(size, 'x');
    e->headers.emplace("Content-Type", "application/json");
    e->generation = generation;
    return e;
}

}  // namespace

TEST(ResponseCache, HitReturnsTheSameSharedEntry) {
    emu::ResponseCache c(1 << 20);
    EXPECT_EQ(c.find("F /a", 1), nullptr);
    auto e = entry(100);
    c.put("F /a", e);
    EXPECT_EQ(c.find("F /a", 1), e);                 // the entry itself, no copy
    EXPECT_EQ(c.find("D /a", 1), nullptr);           // another tier is another key
    EXPECT_NE(c.to_json().find("\"entries\":1,\"hits\":1,\"misses\":2"), std::string::npos) << c.to_json();
}

TEST(ResponseCache, AnEntryOfAnOlderGenerationIsAMissAndLeaves) {
    emu::ResponseCache c(1 << 20);
    c.put("F /a", entry(100, 1));
    EXPECT_EQ(c.find("F /a", 2), nullptr);
    EXPECT_EQ(c.find("F /a", 1), nullptr);  // dropped, not kept for the old generation
    EXPECT_NE(c.to_json().find("\"bytes\":0,\"entries\":0"), std::string::npos) << c.to_json();
}

TEST(ResponseCache, EvictsLeastRecentlyUsedWithinTheByteBound) {
    emu::ResponseCache c(3000);
    c.put("a", entry(700));
    c.put("b", entry(700));
    c.put("c", entry(700));
    ASSERT_NE(c.find("a", 1), nullptr);  // a is now the most recent
    c.put("d", entry(700));              // over 3000 with the overhead: b goes
    EXPECT_EQ(c.find("b", 1), nullptr);
    EXPECT_NE(c.find("a", 1), nullptr);
    EXPECT_NE(c.find("c", 1), nullptr);
    EXPECT_NE(c.find("d", 1), nullptr);
    c.put("big", entry(5000));  // larger than the whole cache: not stored, nothing evicted
    EXPECT_EQ(c.find("big", 1), nullptr);
    EXPECT_NE(c.find("a", 1), nullptr);
}

TEST(ResponseCache, ClearDropsEntriesKeepsCountsAndZeroDisables) {
    emu::ResponseCache c(1 << 20);
    c.put("a", entry(10));
    ASSERT_NE(c.find("a", 1), nullptr);
    c.clear();
    EXPECT_EQ(c.find("a", 1), nullptr);
    EXPECT_NE(c.to_json().find("\"entries\":0,\"hits\":1,\"misses\":1"), std::string::npos) << c.to_json();
    c.reset_counts();
    EXPECT_NE(c.to_json().find("\"hits\":0,\"misses\":0"), std::string::npos) << c.to_json();

    emu::ResponseCache off(0);
    EXPECT_FALSE(off.enabled());
    off.put("a", entry(10));
    EXPECT_EQ(off.find("a", 1), nullptr);
    EXPECT_EQ(off.to_json(), "{\"max_bytes\":0,\"bytes\":0,\"entries\":0,\"hits\":0,\"misses\":0}");
}
