// The I/O engine of the asyncio face (vehicledata.AsyncClient): one thread
// driving one libcurl multi handle (MultiBatch) for one Client, fed by a
// queue of jobs.  A job fetches one or more targets with the Client's rules
// (JWT, token bucket, retries and Retry-After, limits, decoding: the steps
// Client exposes for drivers of their own transfers, shared with
// Client::fetch_pages; an answer in the Client's response cache is taken
// from there, without a request) and ends by calling its completion once, with the
// decoded pages or the error; a cancelled job's transfers are removed from
// the multi handle at once and its completion is never called.
//
// All jobs share the Client's connections, token bucket and JWT; at most
// ClientOptions::max_parallel transfers run at once across all of them
// (jobs start their transfers in submission order).  Logging in (the first
// request, or after a rejected token) blocks the engine thread for that one
// request.
//
// Threading: submit() and cancel() may be called from any thread.
// Completions and the Client's logger run on the engine thread; a completion
// must not call back into the engine's destructor.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "vehicledata/client/client.h"

namespace vehicledata::client {

class Engine {
public:
    struct Result {
        // One page per target in target order; a collecting job (Job::first
        // set) gives one page: first with every target's rows appended.
        std::vector<Page> pages;
        // A Get job: the successful answer of each target, in target order.
        std::vector<Response> responses;
        // A Download job: what was downloaded.
        std::optional<DownloadResult> download;
        std::exception_ptr error;  // set instead of the above when the job failed
    };
    using Completion = std::function<void(Result&&)>;

    struct Job {
        // Pages: each target's answer decoded as `record` (Client::accept).
        // Get: the raw 2xx answers (Client::get's steps, without decoding).
        // Download: `download` driven to its end (targets: its one target).
        enum class Kind { Pages, Get, Download };
        Kind kind = Kind::Pages;
        std::shared_ptr<Download> download;
        std::vector<std::string> targets;
        const schema::Record* record = nullptr;
        // The decode projection `record` points to when the job owns it (project_record), else null.
        std::shared_ptr<const schema::Record> projection;
        schema::Shape shape = schema::Shape::Envelope;
        bool verbose = false;
        // Check each page against the crawl it belongs to (PaginationError),
        // in target order, as it arrives.
        std::optional<Crawl> crawl;
        // Collect: append the pages in order to a copy of this page (columns
        // reserved for its collection.total), each released once appended,
        // at most Client::reorder_window() - 1 held ahead of a missing one.
        std::optional<Page> first;
        // A Pages job may hand each page to `each(index, page)` (on the engine
        // thread, in arrival order) instead of keeping it: its Result then has
        // no pages.  With `refused`, a target the server refuses for itself
        // (refused_alone(), after its retries) goes to `refused(index, error)`
        // and the job goes on (Client::fetch_pages' `on_refused`: a batch of
        // VINs).  Neither is called once the job is cancelled or the engine stopping.
        std::function<void(std::size_t, Page&&)> each;
        std::function<void(std::size_t, const ApiError&)> refused;
        // At most this many of the job's transfers at once (<= 0: only the
        // engine's cap, ClientOptions::max_parallel, which holds across all jobs).
        int parallel = 0;
        Completion done;
    };

    explicit Engine(ClientOptions options);
    // Stops the thread: jobs still running are dropped without their completion
    // (never on the engine thread: after stop() there, on another one).
    ~Engine();
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    // Queue a job; returns its id (for cancel()).
    std::uint64_t submit(Job job);
    // Drop a job: its transfers are removed from the multi handle at once and its
    // completion is not called (a no-op when it already completed).
    void cancel(std::uint64_t id);
    // Stop the thread now (as the destructor; idempotent): no completion is
    // called once it returns.  On the engine thread itself (a completion or the
    // logger) it cannot wait for itself: it marks the engine stopping and
    // returns, the thread ends after its current step, and the destructor must
    // then run on another thread (see on_engine_thread()).
    void stop();
    // True when called from the engine thread (where stop() and the destructor
    // would wait for themselves: hand the engine to another thread to end it).
    bool on_engine_thread() const { return std::this_thread::get_id() == thread_.get_id(); }

    Client& client() { return client_; }
    // Jobs queued or running (completed and cancelled ones are gone).
    std::size_t jobs() const;
    // Transfers in flight at once, at most (since the engine started).
    std::size_t peak_transfers() const { return peak_transfers_.load(); }

private:
    struct Running;
    void run();
    void take_queue();
    void start_transfers(int& wait_ms);
    void finish(std::size_t key, Response&& r);
    void deliver(Running& job, std::size_t index, Page&& page);
    // Target `index` of an `each` job the server refused for itself (Job::refused).
    void passed(Running& job, std::size_t index, const ApiError& error);
    // A Get job's answer of target `index` (completes the job with the last one).
    void answered(Running& job, std::size_t index, Response&& response);
    // Target `index` of a Pages or Get job served from the Client's response
    // cache (Client::cached_page / cached_response), if it holds the answer:
    // Completed when that ended the job (`job` is gone).
    enum class Cached { No, Served, Completed };
    Cached from_cache(Running& job, std::size_t index);
    void complete(std::uint64_t id, Result&& result);
    // Whether job `id` may still hand anything over: the engine not stopping, the job not cancelled.
    bool live(std::uint64_t id) const;
    void fail(std::uint64_t id, std::exception_ptr error);
    // Remove job `id`'s transfers from the multi handle (a cancelled or failed job).
    void drop_transfers(std::uint64_t id);

    Client client_;
    MultiBatch batch_;
    mutable std::mutex mutex_;
    std::deque<std::pair<std::uint64_t, Job>> queued_;  // guarded by mutex_
    std::vector<std::uint64_t> cancelled_;              // guarded by mutex_
    std::uint64_t next_id_ = 1;                         // guarded by mutex_
    std::size_t count_ = 0;                             // jobs queued or running; guarded by mutex_
    bool stopping_ = false;                             // guarded by mutex_
    // Engine thread only:
    std::map<std::uint64_t, std::unique_ptr<Running>> running_;  // by id: submission order
    std::map<std::size_t, std::pair<std::uint64_t, std::size_t>> transfers_;  // transfer key -> (job, target)
    std::size_t next_key_ = 1;
    std::optional<std::chrono::steady_clock::time_point> blocked_since_;
    std::atomic<std::size_t> peak_transfers_{0};  // written by the engine thread
    std::thread thread_;
};

}  // namespace vehicledata::client
