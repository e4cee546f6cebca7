// vehicledata._core.client.Engine: the asyncio face's I/O engine for Python.
//
// submit() queues a job on the engine's thread (transfers, retries, waits and
// decoding there, without the GIL) and returns at once.  When the job ends,
// the engine thread takes the GIL only to turn the result into Python objects
// (core Pages, or the vehicledata.errors exception) and to schedule
// `callback(value, error)` on the asyncio loop with loop.call_soon_threadsafe;
// the callback (vehicledata.aio) settles the future.  A cancelled job never
// calls back.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "vehicledata/client/engine.h"
#include "vehicledata/client/errors.h"
#include "vehicledata/client/page.h"
#include "vehicledata/client/paging.h"
#include "vehicledata/schema.h"

#include "client_objects.h"

namespace py = pybind11;
namespace vc = vehicledata::client;
namespace sc = vehicledata::schema;

namespace vehicledata::bindings {

namespace {

// The engine and the Python objects it keeps.  Closing (or collecting) it
// stops the engine thread with the GIL released, since that thread may be
// waiting for the GIL to hand over a result.
struct PyEngine {
    std::unique_ptr<vc::Engine> engine;
    std::shared_ptr<py::object> logger;

    vc::Engine& get() {
        if (!engine) throw py::value_error("the client is closed");
        return *engine;
    }
    void close() {
        if (!engine) return;
        if (engine->on_engine_thread()) {
            // Closed from the engine thread (the logger, or a finalizer run by a collection
            // there): it cannot wait for itself.  Stopped at once (no result of it reaches a loop
            // after this: the loops awaiting them may close next), ended by another thread.
            engine->stop();
            std::thread([e = std::move(engine)]() mutable { e.reset(); }).detach();
            return;
        }
        py::gil_scoped_release nogil;
        engine.reset();
    }
    ~PyEngine() {
        if (engine && Py_IsInitialized()) close();
    }
};

// Python objects held by a job until it ends on the engine thread: released with the GIL.
using Held = std::shared_ptr<py::object>;
Held hold(py::object o) {
    return Held(new py::object(std::move(o)), [](py::object* p) {
        if (python_finalizing()) return;  // leaked: see python_finalizing()
        py::gil_scoped_acquire g;
        delete p;
    });
}

// The job's completion: on the engine thread, with the GIL, `value(result)` (or the error) is
// scheduled as `callback(value, error)` on `loop` (call_soon_threadsafe).  The loop and the
// callback are let go under the same hold of the GIL (a job completes once): else each is let go
// as the job is destroyed, by two more takes of the GIL, each one a chance for the engine thread
// to be descheduled while the loop's thread waits for the GIL (benchmarks/loop_lag.py).
vc::Engine::Completion hand_over(py::object loop, py::object callback,
                                 std::function<py::object(vc::Engine::Result&)> value) {
    Held held_loop = hold(std::move(loop));
    Held held_callback = hold(std::move(callback));
    return [held_loop, held_callback, value = std::move(value)](vc::Engine::Result&& result) mutable {
        if (python_finalizing()) return;
        py::gil_scoped_acquire g;
        try {
            py::object v = py::none(), error = py::none();
            if (result.error) error = error_object(result.error);
            else v = value(result);
            held_loop->attr("call_soon_threadsafe")(*held_callback, v, error);
        } catch (py::error_already_set& e) {  // the loop is closed: nobody waits any more
            e.discard_as_unraisable("vehicledata AsyncClient (result after the event loop closed)");
        }
        held_loop.reset();  // (their deleters take the GIL this thread holds: no wait)
        held_callback.reset();
    };
}

// The engine thread takes the GIL for a log line only when the "vehicledata" logger would
// keep it (WARNING and above always: they also show on progress bars), read at each submit.
void follow_log_level(PyEngine& self) {
    const int effective = py::module_::import("logging").attr("getLogger")("vehicledata")
                              .attr("getEffectiveLevel")().cast<int>();
    self.get().client().set_log_level(std::min(effective, static_cast<int>(vc::kWarning)));
}

sc::Shape shape_named(const std::string& s) {
    if (s == "envelope") return sc::Shape::Envelope;
    if (s == "array") return sc::Shape::Array;
    if (s == "object") return sc::Shape::Object;
    throw py::value_error("shape must be 'envelope', 'array' or 'object', not '" + s + "'");
}

std::uint64_t submit(PyEngine& self, py::object loop, py::object callback, std::vector<std::string> targets,
                     const std::string& record, const std::string& shape, bool verbose, const vc::Page* first,
                     std::int64_t first_number, std::optional<std::vector<std::int64_t>> numbers, bool collect,
                     bool single, std::optional<std::vector<std::string>> fields) {
    vc::Engine::Job job;
    job.record = sc::find_record(record);
    if (!job.record) throw py::value_error("no record named '" + record + "' in the schema table");
    if (fields) {  // the sync pages' decode projection (Pager.fields), owned by the job
        try {
            job.projection = std::make_shared<const sc::Record>(vc::project_record(*job.record, *fields));
        } catch (const std::invalid_argument& e) {
            throw py::value_error(e.what());
        }
        job.record = job.projection.get();
    }
    job.shape = shape_named(shape);
    job.verbose = verbose;
    if (collect && !first) throw py::value_error("collect needs the first page");
    if (single && targets.size() != 1) throw py::value_error("single needs exactly one target");
    if (first) {
        vc::Crawl crawl{vc::paging_of(*first, first_number), {}};
        if (numbers) {
            if (numbers->size() != targets.size()) throw py::value_error("numbers must give one page number per target");
            crawl.numbers = std::move(*numbers);
        } else {
            for (std::size_t i = 0; i < targets.size(); ++i)
                crawl.numbers.push_back(first_number + 1 + static_cast<std::int64_t>(i));
        }
        job.crawl = std::move(crawl);
        if (collect) job.first = *first;
    }
    job.targets = std::move(targets);
    follow_log_level(self);
    const bool one_page = collect || single;
    job.done = hand_over(std::move(loop), std::move(callback), [one_page](vc::Engine::Result& result) -> py::object {
        if (one_page) return py::cast(std::make_shared<vc::Page>(std::move(result.pages.at(0))));
        py::list pages;
        for (auto& p : result.pages) pages.append(py::cast(std::make_shared<vc::Page>(std::move(p))));
        return std::move(pages);
    });
    return self.get().submit(std::move(job));
}

// Client.fetch_pages_settled on the engine: each page, or each target the server refuses for
// itself, is scheduled as `on_done(index, page, None, None)` / `on_done(index, None, status,
// message)` on `loop` as it arrives; `callback(None, error)` when the batch ends.
std::uint64_t submit_settled(PyEngine& self, py::object loop, py::object callback, std::vector<std::string> targets,
                             const std::string& record, const std::string& shape, bool verbose, int parallel,
                             py::object on_done) {
    if (parallel < 1) throw py::value_error("parallel must be at least 1");
    vc::Engine::Job job;
    job.record = sc::find_record(record);
    if (!job.record) throw py::value_error("no record named '" + record + "' in the schema table");
    job.shape = shape_named(shape);
    job.verbose = verbose;
    job.parallel = parallel;
    job.targets = std::move(targets);
    Held held_loop = hold(loop);
    Held held_on_done = hold(std::move(on_done));
    auto schedule = [held_loop, held_on_done](std::size_t i, py::object page, py::object status, py::object message) {
        try {
            held_loop->attr("call_soon_threadsafe")(*held_on_done, i, page, status, message);
        } catch (py::error_already_set& e) {  // the loop is closed: nobody waits any more
            e.discard_as_unraisable("vehicledata AsyncClient (result after the event loop closed)");
        }
    };
    job.each = [schedule](std::size_t i, vc::Page&& page) {
        if (python_finalizing()) return;
        auto held = std::make_shared<vc::Page>(std::move(page));
        py::gil_scoped_acquire g;
        schedule(i, py::cast(held), py::none(), py::none());
    };
    job.refused = [schedule](std::size_t i, const vc::ApiError& e) {
        if (python_finalizing()) return;
        py::gil_scoped_acquire g;
        schedule(i, py::none(), py::int_(e.status), safe_text(e.what()));
    };
    follow_log_level(self);
    job.done = hand_over(std::move(loop), std::move(callback), [](vc::Engine::Result&) -> py::object {
        return py::none();
    });
    return self.get().submit(std::move(job));
}

std::uint64_t submit_get(PyEngine& self, py::object loop, py::object callback, std::string target) {
    vc::Engine::Job job;
    job.kind = vc::Engine::Job::Kind::Get;
    job.targets.push_back(std::move(target));
    follow_log_level(self);
    job.done = hand_over(std::move(loop), std::move(callback), [](vc::Engine::Result& result) -> py::object {
        return response_dict(result.responses.at(0));
    });
    return self.get().submit(std::move(job));
}

std::uint64_t submit_download(PyEngine& self, py::object loop, py::object callback, std::string target,
                              std::string path, bool resume, py::object progress, double timeout,
                              std::int64_t max_bytes) {
    vc::ProgressFn fn;
    if (!progress.is_none()) {
        // Each report (about every 100 ms) is scheduled on the loop, as the result is.
        Held held_loop = hold(loop);
        Held held_progress = hold(std::move(progress));
        fn = [held_loop, held_progress](std::int64_t done, std::int64_t total) {
            if (python_finalizing()) return;
            py::gil_scoped_acquire g;
            try {
                held_loop->attr("call_soon_threadsafe")(*held_progress, done, total);
            } catch (py::error_already_set& e) {
                e.discard_as_unraisable("vehicledata progress callback");
            }
        };
    }
    vc::Engine::Job job;
    job.kind = vc::Engine::Job::Kind::Download;
    job.download = std::make_shared<vc::Download>(self.get().client(), target, std::move(path), resume, std::move(fn),
                                                  timeout, max_bytes);
    job.targets.push_back(std::move(target));
    follow_log_level(self);
    job.done = hand_over(std::move(loop), std::move(callback), [](vc::Engine::Result& result) -> py::object {
        return download_dict(*result.download);
    });
    return self.get().submit(std::move(job));
}

}  // namespace

void bind_engine(py::module_& c) {
    py::class_<PyEngine>(c, "Engine",
                         "The asyncio face's I/O engine: one thread driving a libcurl multi handle for one client "
                         "(use vehicledata.AsyncClient).")
        .def(py::init([](vc::ClientOptions o, py::object logger) {
                 vc::validate(o.retry);
                 auto pe = std::make_unique<PyEngine>();
                 pe->engine = std::make_unique<vc::Engine>(std::move(o));
                 pe->logger = attach_logger(pe->engine->client(), logger);
                 return pe;
             }),
             py::arg("options"), py::arg("logger") = py::none(),
             "An engine (and its thread) for a client with these ClientOptions; `logger`: callable(level, message).")
        .def("submit", &submit, py::arg("loop"), py::arg("callback"), py::arg("targets"), py::arg("record"),
             py::arg("shape") = "envelope", py::arg("verbose") = false, py::arg("first") = nullptr,
             py::arg("first_number") = 1, py::arg("numbers") = py::none(), py::arg("collect") = false,
             py::arg("single") = false, py::arg("fields") = py::none(),
             "Queue the fetch of `targets`; returns the job id.  When it ends, `callback(value, error)` is scheduled "
             "on `loop` (call_soon_threadsafe): value a core Page (`single`, or `collect`: `first` with every page "
             "appended in order) or the list of Pages in target order, error an exception (value None).  With "
             "`first` (page `first_number` of the crawl) each page, numbered by `numbers`, is checked against it.  `fields`: decode only these fields of the record "
             "(None: all, as `first` was decoded).")
        .def("fetch_pages_settled", &submit_settled, py::arg("loop"), py::arg("callback"), py::arg("targets"),
             py::arg("record"), py::arg("shape"), py::arg("verbose"), py::arg("parallel"), py::arg("on_done"),
             "Queue the fetch of `targets` (at most `parallel` transfers of it at once, inside the engine's cap), "
             "as Client.fetch_pages_settled: `on_done(index, page, None, None)` is scheduled on `loop` as each "
             "page arrives, `on_done(index, None, status, message)` for a target the server refuses for itself "
             "(a 4xx other than 401/403/429, after its retries), and the batch goes on; `callback(None, error)` "
             "when it ends (error: what ended it).  Returns the job id.")
        .def("get", &submit_get, py::arg("loop"), py::arg("callback"), py::arg("target"),
             "Queue a raw GET of `target` (auth, retries, the rate limit; not decoded); returns the job id.  "
             "`callback(value, error)` is scheduled on `loop` with value {status, url, content_type, http_version, "
             "body} as Client.get's.")
        .def("download", &submit_download, py::arg("loop"), py::arg("callback"), py::arg("target"), py::arg("path"),
             py::arg("resume") = true, py::arg("progress") = py::none(), py::arg("timeout") = 0.0,
             py::arg("max_bytes") = 0,
             "Queue the download of `target` into `path` (Client.download's rules: resume, the total `timeout`, "
             "max_bytes); returns the job id.  `progress(done, total)` and `callback({bytes, resumed, content_type}, "
             "error)` are scheduled on `loop`.")
        .def("cancel", [](PyEngine& p, std::uint64_t id) { p.get().cancel(id); }, py::arg("job"),
             "Drop a job: its transfers leave the multi handle at once; its callback is never called.")
        .def("close", &PyEngine::close, "Stop the engine thread (jobs still running are dropped).")
        .def_property_readonly("closed", [](const PyEngine& p) { return !p.engine; })
        .def_property_readonly("jobs", [](PyEngine& p) { return p.get().jobs(); }, "Jobs queued or running.")
        .def_property_readonly("peak_transfers", [](PyEngine& p) { return p.get().peak_transfers(); },
                               "Most transfers in flight at once so far (at most max_parallel).")
        .def_property_readonly("base_url", [](PyEngine& p) { return p.get().client().options().base_url; })
        .def_property_readonly("has_credentials", [](PyEngine& p) { return p.get().client().has_credentials(); })
        .def_property_readonly("has_token", [](PyEngine& p) { return p.get().client().has_token(); })
        .def("url_for", [](PyEngine& p, const std::string& t) { return p.get().client().url_for(t); })
        .def("stats", [](PyEngine& p) { return stats_dict(p.get().client().stats()); });
}

}  // namespace vehicledata::bindings
