// RetryState: the one decision of every retry the client makes (statuses,
// transfers, bodies that did not decode, Retry-After, max_wait, one budget).
#include <gtest/gtest.h>

#include <stdexcept>

#include "vehicledata/client/retry.h"

namespace vc = vehicledata::client;

namespace {

double no_jitter(double) { return 0.0; }
double full_jitter(double max) { return max; }

vc::RetryPolicy policy(int total = 3) {
    vc::RetryPolicy p;
    p.total = total;
    p.backoff_factor = 0.5;
    p.backoff_max = 1.5;
    p.backoff_jitter = 0.0;
    return p;
}

}  // namespace

TEST(RetryState, ForcelistStatusesBackOffUntilTheBudgetIsSpent) {
    const vc::RetryPolicy p = policy(4);
    vc::RetryState s(p, &no_jitter);
    const double expected[] = {0.5, 1.0, 1.5, 1.5};  // capped at backoff_max
    for (int i = 0; i < 4; ++i) {
        vc::RetryDecision d = s.status(503, "");
        ASSERT_TRUE(d.retry) << i;
        EXPECT_FALSE(d.past_max_wait);
        EXPECT_EQ(d.number, i + 1);
        EXPECT_DOUBLE_EQ(d.delay, expected[i]);
        EXPECT_EQ(d.reason, "HTTP 503");
    }
    vc::RetryDecision last = s.status(503, "");
    EXPECT_FALSE(last.retry);
    EXPECT_FALSE(last.past_max_wait);
    EXPECT_EQ(s.retries(), 4);
}

TEST(RetryState, OtherStatusesAreNeverRetriedAndCostNothing) {
    const vc::RetryPolicy p = policy();
    vc::RetryState s(p, &no_jitter);
    for (long status : {400L, 401L, 404L, 500L, 502L}) {
        vc::RetryDecision d = s.status(status, "1");
        EXPECT_FALSE(d.retry) << status;
        EXPECT_EQ(d.reason, "HTTP " + std::to_string(status));
    }
    EXPECT_EQ(s.retries(), 0);
    EXPECT_TRUE(s.status(429, "").retry);  // the budget is intact
}

TEST(RetryState, RetryAfterReplacesTheBackoff) {
    const vc::RetryPolicy p = policy();
    vc::RetryState s(p, &full_jitter);
    vc::RetryDecision d = s.status(429, "2");
    ASSERT_TRUE(d.retry);
    EXPECT_DOUBLE_EQ(d.delay, 2.0);  // no jitter added to the server's value
    EXPECT_EQ(d.reason, "HTTP 429 (Retry-After 2)");
    d = s.status(503, "Sun, 06 Nov 1994 08:49:37 GMT", 784111777 - 7);  // an HTTP date, 7 s ahead
    ASSERT_TRUE(d.retry);
    EXPECT_DOUBLE_EQ(d.delay, 7.0);
    EXPECT_EQ(d.number, 2);
    d = s.status(503, "soon");  // unparseable: the backoff of retry 3
    ASSERT_TRUE(d.retry);
    EXPECT_DOUBLE_EQ(d.delay, 1.5);
    EXPECT_EQ(d.reason, "HTTP 503");
}

TEST(RetryState, RetryAfterIgnoredUnlessRespected) {
    vc::RetryPolicy p = policy();
    p.respect_retry_after = false;
    vc::RetryState s(p, &no_jitter);
    vc::RetryDecision d = s.status(429, "60");
    ASSERT_TRUE(d.retry);
    EXPECT_DOUBLE_EQ(d.delay, 0.5);
    EXPECT_EQ(d.reason, "HTTP 429");
}

TEST(RetryState, MaxWaitCapsTheTotalOfTheSleeps) {
    vc::RetryPolicy p = policy();  // max_wait 120 s by default
    vc::RetryState s(p, &no_jitter);
    EXPECT_TRUE(s.status(503, "60").retry);   // 60 s slept
    EXPECT_TRUE(s.status(503, "60").retry);   // 120 s: at the cap, not past it
    vc::RetryDecision d = s.status(503, "60");  // 180 s would pass it: give up, do not sleep
    EXPECT_FALSE(d.retry);
    EXPECT_TRUE(d.past_max_wait);
    EXPECT_DOUBLE_EQ(d.delay, 60.0);
    vc::RetryState t(p, &no_jitter);  // a new request starts from nothing
    EXPECT_TRUE(t.status(503, "100").retry);
    EXPECT_FALSE(t.status(503, "30").retry);  // 130 s in total
}

TEST(RetryState, AWaitBudgetCapsTheSleepsOfAWholeCall) {
    vc::RetryPolicy p = policy();  // max_wait 120 s
    vc::WaitBudget call;
    vc::RetryState page2(p, &no_jitter, &call), page3(p, &no_jitter, &call), page4(p, &no_jitter, &call);
    EXPECT_TRUE(page2.status(503, "60").retry);  // the call: 60 s
    EXPECT_TRUE(page3.status(503, "60").retry);  // 120 s: at the cap
    vc::RetryDecision d = page4.status(503, "60");  // alone 60 s, but the call would pass 120 s
    EXPECT_FALSE(d.retry);
    EXPECT_TRUE(d.past_max_wait);
    EXPECT_DOUBLE_EQ(call.waited(), 120.0);  // the refused sleep is not counted
    vc::RetryState alone(p, &no_jitter);     // without the budget: only its own total
    EXPECT_TRUE(alone.status(503, "60").retry);
    vc::RetryState page5(p, &no_jitter, &call);
    EXPECT_FALSE(page5.status(503, "100").retry);  // its own total is fine, the call's is not
    EXPECT_TRUE(page5.status(503, "0").retry);     // a sleep of nothing always fits
}

TEST(RetryState, ASleepPastMaxWaitGivesUp) {
    vc::RetryPolicy p = policy();
    p.max_wait = 5;
    vc::RetryState s(p, &no_jitter);
    vc::RetryDecision d = s.status(429, "30");
    EXPECT_FALSE(d.retry);
    EXPECT_TRUE(d.past_max_wait);
    EXPECT_DOUBLE_EQ(d.delay, 30.0);
    p.max_wait = 0.7;  // the backoff of retry 2 (1.0 s) is over it
    vc::RetryState t(p, &no_jitter);
    EXPECT_TRUE(t.transfer_failed("reset").retry);
    d = t.transfer_failed("reset");
    EXPECT_FALSE(d.retry);
    EXPECT_TRUE(d.past_max_wait);
    EXPECT_DOUBLE_EQ(d.delay, 1.0);
}

TEST(RetryState, OneBudgetForStatusesTransfersAndBodies) {
    const vc::RetryPolicy p = policy(3);
    vc::RetryState s(p, &no_jitter);
    vc::RetryDecision d = s.transfer_failed("Connection reset by peer");
    ASSERT_TRUE(d.retry);
    EXPECT_EQ(d.reason, "Connection reset by peer");
    d = s.decode_failed("unexpected end at byte 10");
    ASSERT_TRUE(d.retry);
    EXPECT_EQ(d.number, 2);
    EXPECT_DOUBLE_EQ(d.delay, 1.0);
    EXPECT_EQ(d.reason, "a body that did not decode: unexpected end at byte 10");
    EXPECT_TRUE(s.status(503, "").retry);
    EXPECT_FALSE(s.transfer_failed("reset").retry);
    EXPECT_FALSE(s.decode_failed("bad").retry);
    EXPECT_FALSE(s.status(503, "").retry);
    EXPECT_EQ(s.retries(), 3);
}

TEST(RetryState, TransportErrorsOnlyWhenAllowed) {
    vc::RetryPolicy p = policy();
    p.retry_transport_errors = false;
    vc::RetryState s(p, &no_jitter);
    EXPECT_FALSE(s.transfer_failed("timeout").retry);
    EXPECT_FALSE(s.decode_failed("bad").retry);
    EXPECT_TRUE(s.status(503, "").retry);  // statuses still are
}

TEST(RetryState, NoRetriesWithAZeroBudget) {
    const vc::RetryPolicy p = policy(0);
    vc::RetryState s(p);
    EXPECT_FALSE(s.status(429, "1").retry);
    EXPECT_FALSE(s.transfer_failed("reset").retry);
}

TEST(RetryState, JitterIsAddedToTheBackoff) {
    vc::RetryPolicy p = policy();
    p.backoff_jitter = 0.25;
    vc::RetryState fixed(p, &full_jitter);
    EXPECT_DOUBLE_EQ(fixed.status(503, "").delay, 0.75);
    for (int i = 0; i < 20; ++i) {
        vc::RetryState random(p);  // the real source: uniform(0, 0.25)
        double delay = random.transfer_failed("reset").delay;
        EXPECT_GE(delay, 0.5);
        EXPECT_LE(delay, 0.75);
    }
}

TEST(RetryState, TokenRenewedOnceWithoutTheBudget) {
    const vc::RetryPolicy p = policy(1);
    vc::RetryState s(p, &no_jitter);
    EXPECT_TRUE(s.renew_token());
    EXPECT_FALSE(s.renew_token());
    EXPECT_EQ(s.retries(), 0);
    EXPECT_TRUE(s.status(503, "").retry);
}

TEST(RetryPolicy, NegativeNumbersAreRefused) {
    vc::RetryPolicy p;
    EXPECT_NO_THROW(vc::validate(p));
    p.total = -1;
    EXPECT_THROW(vc::validate(p), std::invalid_argument);
    p = vc::RetryPolicy{};
    p.max_wait = -0.5;
    try {
        vc::validate(p);
        FAIL() << "no exception";
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(), "Retry.max_wait must be >= 0, not -0.5");
    }
}
