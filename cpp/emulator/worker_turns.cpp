// The gate's worker turns (worker_turns.h).
#include "worker_turns.h"

#include <sched.h>

#include <algorithm>
#include <thread>

namespace vehicledata::emulator {

namespace {
// The turns whose worker this thread is (bind_thread), for WorkerWait; null on any other thread.
thread_local WorkerTurns* t_worker = nullptr;
}  // namespace

int default_compute() {
    cpu_set_t set;
    CPU_ZERO(&set);
    int cores = ::sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
    if (cores <= 0) cores = static_cast<int>(std::thread::hardware_concurrency());
    return std::max(2, 2 * cores);
}

WorkerTurns::WorkerTurns(int threads, int compute)
    : threads_(threads), compute_(std::max(1, std::min(threads, compute > 0 ? compute : default_compute()))) {}

void WorkerTurns::queue(Conn* c, bool kept) {
    bool wake;  // only a worker that may compute now: the others would wake for nothing
    {
        std::lock_guard<std::mutex> lock(mutex_);
        (kept ? ready_ : fresh_).push_back(c);
        queued_.store(ready_.size() + fresh_.size(), std::memory_order_relaxed);
        wake = running_ < compute_;
    }
    if (wake) cv_.notify_one();
}

Conn* WorkerTurns::take() {
    Conn* c = nullptr;
    {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return stop_ || can_take(); });
        if (stop_) return nullptr;
        ++running_;
        const bool from_fresh = !fresh_.empty() && (fresh_turn_ || ready_.empty());
        std::deque<Conn*>& q = from_fresh ? fresh_ : ready_;
        c = q.front();
        q.pop_front();
        fresh_turn_ = !from_fresh;
        queued_.store(ready_.size() + fresh_.size(), std::memory_order_relaxed);
    }
    busy_.fetch_add(1, std::memory_order_relaxed);
    return c;
}

void WorkerTurns::leave_turn(bool& turn) {
    if (!turn) return;
    bool more;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        --running_;
        more = can_take();
    }
    turn = false;
    if (more) cv_.notify_one();
}

bool WorkerTurns::turn_or_queue(Conn* c, bool& turn) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (running_ < compute_) {
        ++running_;
        turn = true;
        return true;
    }
    ready_.push_back(c);  // as queue() does; a worker ending its turn takes it
    queued_.store(ready_.size() + fresh_.size(), std::memory_order_relaxed);
    return false;
}

void WorkerTurns::put_down() { busy_.fetch_sub(1, std::memory_order_relaxed); }

void WorkerTurns::hand_back(Conn* c, bool turn) {
    bool more;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        done_.push_back(c);
        if (turn) --running_;
        more = can_take();
    }
    if (more) cv_.notify_one();
}

void WorkerTurns::take_back(std::vector<Conn*>& back) {
    std::lock_guard<std::mutex> lock(mutex_);
    back.swap(done_);
}

void WorkerTurns::stop() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    cv_.notify_all();
}

bool WorkerTurns::begin_keep() {
    if (keeping_.fetch_add(1) >= std::max(1, threads_ / 2)) {
        keeping_.fetch_sub(1);
        return false;
    }
    return true;
}

void WorkerTurns::end_keep() { keeping_.fetch_sub(1); }

void WorkerTurns::bind_thread() { t_worker = this; }

void WorkerTurns::begin_wait() {
    bool more;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        --running_;
        more = can_take();
    }
    waiting_.fetch_add(1, std::memory_order_relaxed);
    if (more) cv_.notify_one();
}

void WorkerTurns::end_wait() {
    waiting_.fetch_sub(1, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(mutex_);
    ++running_;  // back to computing (for a moment one more than `compute` may be)
}

WorkerWait::WorkerWait() : turns_(t_worker) {
    if (turns_) turns_->begin_wait();
}

WorkerWait::~WorkerWait() {
    if (turns_) turns_->end_wait();
}

}  // namespace vehicledata::emulator
