// The asyncio face's I/O engine: see vehicledata/client/engine.h.
#include "vehicledata/client/engine.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "vehicledata/client/errors.h"
#include "vehicledata/client/page_scheduler.h"
#include "vehicledata/client/paging.h"

namespace vehicledata::client {

namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

// A job on the engine thread: its targets' retry states and what has arrived.
struct Engine::Running {
    struct Target {
        RetryState retry;
        std::string jwt_used;
    };
    std::uint64_t id = 0;
    Job job;
    std::vector<Target> targets;
    PageScheduler plan;                     // which target starts when (collecting: a window)
    std::vector<std::optional<Page>> out;   // arrived pages (not collecting)
    std::vector<std::optional<Response>> answers;  // arrived answers (a Get job)
    std::map<std::size_t, Page> waiting;    // arrived ahead of `next` (collecting)
    std::optional<Page> acc;                // the collected page
    std::size_t next = 0;                   // first target not yet checked (and appended)
    std::size_t in_flight = 0;              // transfers of this job in the multi handle
    std::exception_ptr failed;

    Running(std::uint64_t id_, Job&& job_, const RetryPolicy& retry, std::size_t window)
        : id(id_), job(std::move(job_)), plan(job.targets.size(), window) {
        targets.reserve(job.targets.size());
        for (std::size_t i = 0; i < job.targets.size(); ++i) targets.push_back(Target{RetryState(retry), {}});
    }
};

Engine::Engine(ClientOptions options) : client_(std::move(options)), batch_(client_.transport()) {
    thread_ = std::thread([this] { run(); });
}

Engine::~Engine() { stop(); }

void Engine::stop() {
    {
        std::lock_guard<std::mutex> lk(mutex_);
        stopping_ = true;
    }
    batch_.wakeup();
    if (on_engine_thread()) return;  // it cannot wait for itself: it ends after its current step
    if (thread_.joinable()) thread_.join();
}

bool Engine::live(std::uint64_t id) const {
    std::lock_guard<std::mutex> lk(mutex_);
    return !stopping_ && std::find(cancelled_.begin(), cancelled_.end(), id) == cancelled_.end();
}

std::uint64_t Engine::submit(Job job) {
    if (job.kind == Job::Kind::Download && (!job.download || job.targets.size() != 1))
        throw std::invalid_argument("a download job has its Download and its one target");
    if (job.kind == Job::Kind::Pages && !job.record) throw std::invalid_argument("a page job has a record");
    if ((job.each || job.refused) && (job.kind != Job::Kind::Pages || job.first || !job.each))
        throw std::invalid_argument("a job handing each page over is a Pages job, not collecting (refused needs each)");
    std::uint64_t id;
    {
        std::lock_guard<std::mutex> lk(mutex_);
        id = next_id_++;
        queued_.emplace_back(id, std::move(job));
        ++count_;
    }
    batch_.wakeup();
    return id;
}

void Engine::cancel(std::uint64_t id) {
    {
        std::lock_guard<std::mutex> lk(mutex_);
        cancelled_.push_back(id);
    }
    batch_.wakeup();
}

std::size_t Engine::jobs() const {
    std::lock_guard<std::mutex> lk(mutex_);
    return count_;
}

void Engine::run() {
    while (true) {
        {
            std::lock_guard<std::mutex> lk(mutex_);
            if (stopping_) break;
        }
        take_queue();
        int wait_ms = 100;
        start_transfers(wait_ms);
        if (batch_.running() > peak_transfers_.load()) peak_transfers_.store(batch_.running());
        for (auto& [key, r] : batch_.poll(std::max(1, wait_ms))) finish(key, std::move(r));
    }
    // Stopped: the jobs still running end without their completion (destroyed here).
    for (auto& [key, t] : transfers_) batch_.cancel(key);
    transfers_.clear();
    running_.clear();
}

void Engine::take_queue() {
    std::deque<std::pair<std::uint64_t, Job>> fresh;
    std::vector<std::uint64_t> cancelled;
    {
        std::lock_guard<std::mutex> lk(mutex_);
        fresh.swap(queued_);
        cancelled.swap(cancelled_);
    }
    for (auto& [id, job] : fresh) {
        const std::size_t n = job.targets.size();
        const bool collecting = static_cast<bool>(job.first);
        auto r = std::make_unique<Running>(id, std::move(job), client_.options().retry,
                                           collecting ? client_.reorder_window() : 0);
        if (collecting) {
            const Page& first = *r->job.first;
            // Reserve for the announced total, but never more than full pages could hold.
            std::size_t expected = first.rows;
            if (first.collection.total > 0)
                expected = std::max(expected, std::min(static_cast<std::size_t>(first.collection.total),
                                                       first.rows * (n + 1)));
            r->acc = empty_like(first, expected);
            append_page(*r->acc, first);  // copied once, into the reserved page
        } else if (r->job.kind == Job::Kind::Get) {
            r->answers.resize(n);
        } else if (!r->job.each) {
            r->out.resize(n);
        }
        running_.emplace(id, std::move(r));
        if (n == 0) {
            Result result;
            if (running_[id]->acc) result.pages.push_back(std::move(*running_[id]->acc));
            complete(id, std::move(result));
        }
    }
    for (std::uint64_t id : cancelled) {
        auto it = running_.find(id);
        if (it == running_.end()) continue;  // completed (or failed) meanwhile
        drop_transfers(id);
        running_.erase(it);
        std::lock_guard<std::mutex> lk(mutex_);
        --count_;
    }
}

void Engine::start_transfers(int& wait_ms) {
    const auto cap = static_cast<std::size_t>(std::max(1, client_.options().max_parallel));
    std::vector<std::uint64_t> failed;
    bool blocked = false;
    for (auto next_job = running_.begin(); next_job != running_.end();) {
        auto current = next_job++;  // (a job served from the cache may complete: only `current` leaves running_)
        const std::uint64_t id = current->first;
        if (blocked || batch_.running() >= cap) break;
        Running& r = *current->second;
        const auto own_cap = r.job.parallel > 0 ? static_cast<std::size_t>(r.job.parallel) : cap;
        while (batch_.running() < cap && r.in_flight < own_cap) {
            const auto now = Clock::now();
            std::optional<std::size_t> due = r.plan.take_due(now, wait_ms);
            if (!due) break;
            const std::size_t k = *due;
            if (r.job.kind != Job::Kind::Download) {  // an answer in the response cache: no request, no token
                Cached c = Cached::No;
                try {
                    c = from_cache(r, k);
                } catch (...) {
                    r.failed = std::current_exception();
                    failed.push_back(id);
                    break;
                }
                if (c == Cached::Completed) break;  // `r` is gone
                if (c == Cached::Served) continue;
            }
            const double wait = client_.try_token();
            if (wait > 0) {
                r.plan.put_back(k);
                if (!blocked_since_) blocked_since_ = now;
                wait_ms = std::min<int>(wait_ms, static_cast<int>(wait * 1000) + 1);
                blocked = true;
                break;
            }
            if (blocked_since_) {  // wall time the engine was held back by the bucket
                client_.note_rate_wait(std::chrono::duration<double>(now - *blocked_since_).count());
                blocked_since_.reset();
            }
            try {
                Request req = r.job.download ? r.job.download->start()
                                             : client_.start_request(r.job.targets[k], &r.targets[k].jwt_used);
                const std::size_t key = next_key_++;
                transfers_.emplace(key, std::make_pair(id, k));
                batch_.add(key, std::move(req));
                ++r.in_flight;
            } catch (...) {
                r.failed = std::current_exception();
                failed.push_back(id);
                break;
            }
        }
    }
    for (std::uint64_t id : failed) fail(id, running_.at(id)->failed);
}

Engine::Cached Engine::from_cache(Running& r, std::size_t k) {
    const std::uint64_t id = r.id;
    if (r.job.kind == Job::Kind::Get) {
        std::optional<Response> hit = client_.cached_response(r.job.targets[k]);
        if (!hit) return Cached::No;
        answered(r, k, std::move(*hit));
    } else {
        std::optional<Page> hit = client_.cached_page(r.job.targets[k], *r.job.record, r.job.shape, r.job.verbose);
        if (!hit) return Cached::No;
        deliver(r, k, std::move(*hit));
    }
    return running_.count(id) ? Cached::Served : Cached::Completed;
}

void Engine::answered(Running& r, std::size_t k, Response&& response) {
    r.answers[k] = std::move(response);
    r.plan.delivered(k);
    if (!r.plan.finished()) return;
    Result result;
    for (auto& a : r.answers) result.responses.push_back(std::move(*a));
    complete(r.id, std::move(result));
}

void Engine::finish(std::size_t key, Response&& response) {
    auto t = transfers_.find(key);
    if (t == transfers_.end()) return;
    const auto [id, k] = t->second;
    transfers_.erase(t);
    auto it = running_.find(id);
    if (it == running_.end()) return;
    Running& r = *it->second;
    --r.in_flight;
    try {
        Running::Target& st = r.targets[k];
        double delay = 0;
        if (r.job.kind == Job::Kind::Download) {
            if (std::optional<DownloadResult> got = r.job.download->finish(response, delay)) {
                Result result;
                result.download = std::move(got);
                complete(id, std::move(result));
                return;
            }
        } else {
            try {
                delay = client_.settle(response, st.retry, st.jwt_used);
            } catch (const ApiError& e) {
                if (!r.job.refused || !refused_alone(e)) throw;
                passed(r, k, e);  // (may complete the job: `r` is gone)
                return;
            }
            if (delay < 0) {
                if (r.job.kind == Job::Kind::Get) {
                    client_.keep(r.job.targets[k], response);
                    answered(r, k, std::move(response));
                    return;
                }
                if (std::optional<Page> page = client_.accept(response, r.job.targets[k], st.retry, *r.job.record,
                                                              r.job.shape, r.job.verbose, delay)) {
                    deliver(r, k, std::move(*page));
                    return;
                }
            }
        }
        r.plan.retry_at(k, Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(delay)));
    } catch (...) {
        fail(id, std::current_exception());
    }
}

void Engine::passed(Running& r, std::size_t k, const ApiError& error) {
    r.plan.delivered(k);
    if (live(r.id)) r.job.refused(k, error);
    if (r.plan.finished()) complete(r.id, Result{});
}

void Engine::deliver(Running& r, std::size_t k, Page&& page) {
    r.plan.delivered(k);
    const Crawl* crawl = r.job.crawl ? &*r.job.crawl : nullptr;
    if (r.job.each) {
        if (live(r.id)) r.job.each(k, std::move(page));
    } else if (r.acc) {
        r.waiting.emplace(k, std::move(page));
        for (auto it = r.waiting.find(r.next); it != r.waiting.end(); it = r.waiting.find(r.next)) {
            if (crawl) check_paging(it->second, crawl->numbers.at(r.next), &crawl->first);
            append_page(*r.acc, std::move(it->second));
            r.waiting.erase(it);
            ++r.next;
        }
    } else {
        r.out[k] = std::move(page);
        for (; r.next < r.out.size() && r.out[r.next]; ++r.next)
            if (crawl) check_paging(*r.out[r.next], crawl->numbers.at(r.next), &crawl->first);
    }
    if (!r.plan.finished()) return;
    Result result;
    if (r.acc) {
        result.pages.push_back(std::move(*r.acc));
    } else if (!r.job.each) {
        result.pages.reserve(r.out.size());
        for (auto& p : r.out) result.pages.push_back(std::move(*p));
    }
    complete(r.id, std::move(result));
}

void Engine::complete(std::uint64_t id, Result&& result) {
    auto it = running_.find(id);
    if (it == running_.end()) return;
    std::unique_ptr<Running> r = std::move(it->second);
    running_.erase(it);
    {
        std::lock_guard<std::mutex> lk(mutex_);
        --count_;
    }
    if (r->job.done && live(id)) r->job.done(std::move(result));
}

void Engine::drop_transfers(std::uint64_t id) {
    for (auto t = transfers_.begin(); t != transfers_.end();) {
        if (t->second.first == id) {
            batch_.cancel(t->first);
            t = transfers_.erase(t);
        } else {
            ++t;
        }
    }
}

void Engine::fail(std::uint64_t id, std::exception_ptr error) {
    drop_transfers(id);
    Result result;
    result.error = std::move(error);
    complete(id, std::move(result));
}

}  // namespace vehicledata::client
