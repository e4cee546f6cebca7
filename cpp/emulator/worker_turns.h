// The gate's worker turns: the queues of complete requests waiting for a worker thread, and the
// turns of the cores those workers take (gate.h).
//
// Invariants:
// - Two queues: the first request of a new connection (`fresh`) and the next request of a kept
//   one (`ready`). Workers take from them in turn while both hold requests, so a newcomer waits
//   behind at most as many requests as are fresh, not behind every kept connection's (a
//   closed-loop crowd keeps `ready` as long as its connections), and the kept ones still get at
//   least every other worker turn.
// - Of the `threads` workers only `compute` take requests at once (twice the cores by default):
//   more runnable threads than that only queue in the kernel's scheduler. A worker takes a request
//   only while fewer than `compute` hold a turn (`running`). A worker that waits instead of
//   computing (WorkerWait: a delay fault's sleep, another request's feed build, its own write to a
//   full socket) leaves its turn to another meanwhile, and takes it back when the wait ends (for a
//   moment one more than `compute` may then run).
// - A connection is in at most one queue, and only while it is `busy` (no other thread touches it
//   until a worker takes it); a worker hands it back to the reactor through the done list.
// - At most half the workers (at least one) wait at once for a kept connection's next request
//   (begin_keep), and they wait without a turn.
//
// Thread safety: every member may be called from any thread (one mutex, and atomics for the
// figures read without it); take() and hand_back() on the workers, queue() and take_back() on the
// reactor thread by the gate's use. WorkerWait works on the thread of a worker that called
// bind_thread(); elsewhere it does nothing.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <vector>

namespace vehicledata::emulator {

struct Conn;

// The number of workers computing at once when GateLimits::compute is 0: twice the cores this
// process may run on, at least 2. More runnable workers than that only queue in the kernel's
// scheduler, and a new connection's answer waits behind all of them (docs/reliability.md).
int default_compute();

class WorkerTurns {
public:
    // `threads` workers, `compute` of them computing at once (0: default_compute()), at most `threads`.
    WorkerTurns(int threads, int compute);

    // The reactor: a connection whose next complete request is buffered (`kept`: it has been
    // answered before) waits for a worker; one is woken if a turn is free.
    void queue(Conn* c, bool kept);
    // A worker: waits for a queued connection and a free turn; returns it with the turn taken and
    // counted as answering (busy), or null once stop() was called.
    Conn* take();
    // A worker holding `turn` gives it up (another may take a queued request meanwhile).
    void leave_turn(bool& turn);
    // A worker without a turn whose connection has its next request complete: takes a free turn
    // (true) or queues the connection in `ready` for the next free one (false: not its to touch).
    bool turn_or_queue(Conn* c, bool& turn);
    // A worker is done answering (after take(): the busy count).
    void put_down();
    // A worker hands a connection back to the reactor, giving up its turn if it holds one
    // (the gate then wakes the reactor).
    void hand_back(Conn* c, bool turn);
    // The reactor: the connections handed back since the last call.
    void take_back(std::vector<Conn*>& back);
    // Wakes every waiting worker; take() returns null from now on.
    void stop();

    // A slot to wait for a kept connection's next request: false when half the workers wait so.
    bool begin_keep();
    void end_keep();

    // Marks the calling thread as one of these workers (for WorkerWait).
    void bind_thread();

    int threads() const { return threads_; }
    int compute() const { return compute_; }
    std::size_t queued() const { return queued_.load(std::memory_order_relaxed); }
    int busy() const { return busy_.load(std::memory_order_relaxed); }
    int waiting() const { return waiting_.load(std::memory_order_relaxed); }

private:
    friend class WorkerWait;
    bool can_take() const { return running_ < compute_ && (!ready_.empty() || !fresh_.empty()); }
    void begin_wait();
    void end_wait();

    const int threads_;
    const int compute_;
    std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<Conn*> ready_;
    std::deque<Conn*> fresh_;
    bool fresh_turn_ = true;   // the next pick is from `fresh` (when both queues hold requests)
    std::vector<Conn*> done_;  // back from the workers
    bool stop_ = false;
    int running_ = 0;                     // workers holding a turn (under the mutex)
    std::atomic<std::size_t> queued_{0};  // ready.size() + fresh.size(), read by workers without the mutex
    std::atomic<int> keeping_{0};         // workers waiting for a kept connection's next request
    std::atomic<int> busy_{0};            // workers answering a request
    std::atomic<int> waiting_{0};         // workers in a WorkerWait
};

// Marks a wait on a gate worker (a sleep, a lock another request holds while it builds): while it
// lasts, the worker does not count against GateLimits::compute, so another worker takes the next
// queued request. Elsewhere (no gate worker on this thread) it does nothing. Not nested.
class WorkerWait {
public:
    WorkerWait();
    ~WorkerWait();
    WorkerWait(const WorkerWait&) = delete;
    WorkerWait& operator=(const WorkerWait&) = delete;

private:
    WorkerTurns* turns_;
};

}  // namespace vehicledata::emulator
