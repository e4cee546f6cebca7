// PageScheduler: the order and timing of one crawl's requests, over an injected clock (no network).
#include <gtest/gtest.h>

#include "vehicledata/client/page_scheduler.h"

namespace vc = vehicledata::client;
using Sched = vc::PageScheduler;
using std::chrono::milliseconds;

namespace {
const Sched::Clock::time_point T0{};

std::optional<std::size_t> take(Sched& s, Sched::Clock::time_point now = T0) {
    int wake = 100;
    return s.take_due(now, wake);
}
}  // namespace

TEST(PageScheduler, StartsTargetsInOrderAndFinishesWhenAllAreDelivered) {
    Sched s(3, 0);
    EXPECT_EQ(take(s), 0u);
    EXPECT_EQ(take(s), 1u);
    EXPECT_EQ(take(s), 2u);
    EXPECT_EQ(take(s), std::nullopt);
    EXPECT_TRUE(s.nothing_pending());
    s.delivered(2);
    s.delivered(0);
    EXPECT_FALSE(s.finished());
    EXPECT_EQ(s.frontier(), 1u);
    s.delivered(1);
    s.delivered(1);  // twice counts once
    EXPECT_TRUE(s.finished());
    EXPECT_EQ(s.done(), 3u);
    EXPECT_EQ(s.frontier(), 3u);
}

TEST(PageScheduler, ARetryWaitsForItsDelayAndALaterTargetGoesFirst) {
    Sched s(3, 0);
    EXPECT_EQ(take(s), 0u);
    s.retry_at(0, T0 + milliseconds(250));
    int wake = 100;
    EXPECT_EQ(s.take_due(T0, wake), 1u);  // 0 is not due: 1 goes first
    EXPECT_EQ(wake, 100);                  // 1 was found before any wait was needed
    EXPECT_EQ(s.take_due(T0, wake), 2u);
    wake = 1000;
    EXPECT_EQ(s.take_due(T0 + milliseconds(100), wake), std::nullopt);
    EXPECT_EQ(wake, 151);  // wakes when 0 falls due
    EXPECT_EQ(take(s, T0 + milliseconds(250)), 0u);
}

TEST(PageScheduler, TheWindowBoundsHowFarPastTheFrontierACrawlRuns) {
    Sched s(6, 2);
    EXPECT_EQ(take(s), 0u);
    EXPECT_EQ(take(s), 1u);
    EXPECT_EQ(take(s), std::nullopt);  // 2 is outside frontier 0 + window 2
    s.delivered(1);
    EXPECT_EQ(take(s), std::nullopt);  // 0 still holds the frontier
    s.delivered(0);
    EXPECT_EQ(s.frontier(), 2u);
    EXPECT_EQ(take(s), 2u);
    EXPECT_EQ(take(s), 3u);
    // A retry outside the window does not set the wake-up; one inside does.
    s.retry_at(3, T0 + milliseconds(40));
    int wake = 100;
    EXPECT_EQ(s.take_due(T0, wake), std::nullopt);
    EXPECT_EQ(wake, 41);
}

TEST(PageScheduler, ATargetPutBackIsFirstAgainAndACachedOneLeavesTheQueue) {
    Sched s(3, 0);
    EXPECT_EQ(take(s), 0u);
    s.put_back(0);  // no token: tried first next time
    EXPECT_EQ(take(s), 0u);
    s.delivered_pending(2);  // answered from a cache while still queued
    EXPECT_EQ(take(s), 1u);
    EXPECT_EQ(take(s), std::nullopt);
    s.delivered(0);
    s.delivered(1);
    EXPECT_TRUE(s.finished());
}

TEST(PageScheduler, NoTargetsIsFinishedAtOnce) {
    Sched s(0, 4);
    EXPECT_TRUE(s.finished());
    EXPECT_TRUE(s.nothing_pending());
    EXPECT_EQ(take(s), std::nullopt);
}
