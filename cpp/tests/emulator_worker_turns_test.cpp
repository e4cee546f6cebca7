// The gate's worker turns (worker_turns.h): the two queues, the turns of the cores, WorkerWait.
// No sockets: the connections are only handed around.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "conn_stream.h"
#include "worker_turns.h"

namespace emu = vehicledata::emulator;

TEST(EmulatorWorkerTurns, ComputeIsResolvedWithinTheThreads) {
    EXPECT_GE(emu::default_compute(), 2);
    EXPECT_EQ(emu::WorkerTurns(4, 1).compute(), 1);
    EXPECT_EQ(emu::WorkerTurns(4, 9).compute(), 4);  // at most `threads`
    EXPECT_EQ(emu::WorkerTurns(64, 0).compute(), std::min(64, emu::default_compute()));
    EXPECT_EQ(emu::WorkerTurns(4, 1).threads(), 4);
}

TEST(EmulatorWorkerTurns, NewcomersAndKeptConnectionsTakeTurns) {
    emu::WorkerTurns turns(8, 8);
    emu::Conn kept1, kept2, new1, new2, new3;
    turns.queue(&kept1, true);
    turns.queue(&kept2, true);
    turns.queue(&new1, false);
    turns.queue(&new2, false);
    turns.queue(&new3, false);
    EXPECT_EQ(turns.queued(), 5u);
    // A newcomer first, then the queues alternate while both hold requests; then what is left.
    const std::vector<emu::Conn*> expected = {&new1, &kept1, &new2, &kept2, &new3};
    for (emu::Conn* want : expected) EXPECT_EQ(turns.take(), want);
    EXPECT_EQ(turns.queued(), 0u);
    EXPECT_EQ(turns.busy(), 5);
    for (int i = 0; i < 5; ++i) turns.put_down();
    EXPECT_EQ(turns.busy(), 0);
}

TEST(EmulatorWorkerTurns, ATurnIsTakenOnlyWhileOneIsFree) {
    emu::WorkerTurns turns(4, 1);
    emu::Conn a, b;
    turns.queue(&a, false);
    ASSERT_EQ(turns.take(), &a);  // holds the one turn
    bool turn_b = false;
    EXPECT_FALSE(turns.turn_or_queue(&b, turn_b));  // none free: b waits in `ready`
    EXPECT_FALSE(turn_b);
    EXPECT_EQ(turns.queued(), 1u);
    bool turn_a = true;
    turns.leave_turn(turn_a);
    EXPECT_FALSE(turn_a);
    EXPECT_EQ(turns.take(), &b);  // the freed turn goes to the queued connection
    EXPECT_EQ(turns.queued(), 0u);
    bool turn_c = false;
    emu::Conn c;
    EXPECT_FALSE(turns.turn_or_queue(&c, turn_c));  // b holds it now
    turns.hand_back(&b, true);                      // b's worker is done and gives its turn back
    EXPECT_EQ(turns.take(), &c);
}

TEST(EmulatorWorkerTurns, AWorkerWaitLeavesItsTurnToAnother) {
    emu::WorkerTurns turns(4, 1);
    turns.bind_thread();  // this thread is one of the workers
    emu::Conn a, b, c;
    turns.queue(&a, false);
    ASSERT_EQ(turns.take(), &a);
    {
        const emu::WorkerWait waiting;  // a's worker sleeps: not computing
        EXPECT_EQ(turns.waiting(), 1);
        bool turn_b = false;
        EXPECT_TRUE(turns.turn_or_queue(&b, turn_b));  // the turn a left
        EXPECT_TRUE(turn_b);
    }
    EXPECT_EQ(turns.waiting(), 0);
    // a is back to computing beside b: two turns held, one more than `compute` for a moment,
    // so the next request waits until both are given up.
    bool turn_c = false;
    EXPECT_FALSE(turns.turn_or_queue(&c, turn_c));
    EXPECT_EQ(turns.queued(), 1u);
    bool turn_a = true, turn_b = true;
    turns.leave_turn(turn_a);
    turns.leave_turn(turn_b);
    EXPECT_EQ(turns.take(), &c);
}

TEST(EmulatorWorkerTurns, AWorkerWaitElsewhereDoesNothing) {
    emu::WorkerTurns turns(4, 1);
    std::thread other([&turns] {
        const emu::WorkerWait waiting;  // not a worker thread of `turns` (no bind_thread)
        EXPECT_EQ(turns.waiting(), 0);
    });
    other.join();
}

TEST(EmulatorWorkerTurns, HandedBackConnectionsReachTheReactorInOrder) {
    emu::WorkerTurns turns(4, 4);
    emu::Conn a, b;
    turns.queue(&a, false);
    turns.queue(&b, true);
    emu::Conn* first = turns.take();
    emu::Conn* second = turns.take();
    turns.hand_back(second, true);
    turns.hand_back(first, true);
    std::vector<emu::Conn*> back;
    turns.take_back(back);
    EXPECT_EQ(back, (std::vector<emu::Conn*>{second, first}));
    std::vector<emu::Conn*> again;
    turns.take_back(again);
    EXPECT_TRUE(again.empty());
}

TEST(EmulatorWorkerTurns, AtMostHalfTheWorkersWaitForAKeptConnection) {
    emu::WorkerTurns turns(4, 4);
    EXPECT_TRUE(turns.begin_keep());
    EXPECT_TRUE(turns.begin_keep());
    EXPECT_FALSE(turns.begin_keep());
    turns.end_keep();
    EXPECT_TRUE(turns.begin_keep());
    emu::WorkerTurns one(1, 1);
    EXPECT_TRUE(one.begin_keep());  // at least one
    EXPECT_FALSE(one.begin_keep());
}

TEST(EmulatorWorkerTurns, AWaitingWorkerIsWokenByAQueuedRequestAndStopEndsTheWait) {
    emu::WorkerTurns turns(2, 2);
    emu::Conn a;
    emu::Conn* got = nullptr;
    std::thread worker([&] { got = turns.take(); });  // blocks until a is queued (a hang is the failure)
    turns.queue(&a, false);
    worker.join();
    EXPECT_EQ(got, &a);
    emu::Conn* after_stop = &a;
    std::thread idle([&] { after_stop = turns.take(); });
    turns.stop();
    idle.join();
    EXPECT_EQ(after_stop, nullptr);
    turns.queue(&a, true);
    EXPECT_EQ(turns.take(), nullptr);  // stopped: queued requests are not taken
}
