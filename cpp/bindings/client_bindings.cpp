// vehicledata._core.client: the libcurl/simdjson client core for Python.
//
// Every transfer, wait and decode runs with the GIL released; the interrupt
// check re-acquires it briefly every 100 ms to run Python's signal handlers so
// Ctrl-C stops a wait.  C++ errors become the classes of vehicledata.errors
// (imported at call time).  Page columns cross into Python as numpy arrays
// that view the page's own buffers (no copy).
#include <pybind11/functional.h>
#include <pybind11/gil_safe_call_once.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "vehicledata/client/client.h"
#include "vehicledata/client/errors.h"
#include "vehicledata/client/library_versions.h"
#include "vehicledata/client/page.h"
#include "vehicledata/client/paging.h"
#include "vehicledata/client/redact.h"
#include "vehicledata/envelope.h"
#include "vehicledata/schema.h"

#include "cells.h"
#include "client_objects.h"

namespace py = pybind11;
namespace vc = vehicledata::client;
namespace sc = vehicledata::schema;

namespace vehicledata::bindings {

void bind_client_options(py::module_& c);  // options_bindings.cpp
void bind_engine(py::module_& client);     // engine_bindings.cpp

namespace {

const char* kind_name(vc::ColumnKind k) {
    switch (k) {
        case vc::ColumnKind::Int64: return "int64";
        case vc::ColumnKind::Float64: return "float64";
        case vc::ColumnKind::Bool: return "bool";
        case vc::ColumnKind::String: return "string";
        case vc::ColumnKind::Timestamp: return "timestamp";
        case vc::ColumnKind::Json: return "json";
    }
    return "?";
}

sc::Shape shape_of(const std::string& s) {
    if (s == "envelope") return sc::Shape::Envelope;
    if (s == "array") return sc::Shape::Array;
    if (s == "object") return sc::Shape::Object;
    throw py::value_error("shape must be 'envelope', 'array' or 'object', not '" + s + "'");
}

const sc::Record& record_of(const std::string& name) {
    const sc::Record* r = sc::find_record(name);
    if (!r) throw py::value_error("no record named '" + name + "' in the schema table");
    return *r;
}

// The record a page is decoded as: `name`'s, or its projection on `fields` (vc::project_record;
// kept in `held` for the call) when fields are given.
const sc::Record& decoded_record(const std::string& name, const std::optional<std::vector<std::string>>& fields,
                                 std::optional<sc::Record>& held) {
    const sc::Record& r = record_of(name);
    if (!fields) return r;
    try {
        held = vc::project_record(r, *fields);
    } catch (const std::invalid_argument& e) {
        throw py::value_error(e.what());
    }
    return *held;
}

// Text from bytes that may not be valid UTF-8 (replacement characters).
py::str text(const std::string& s) {
    return py::reinterpret_steal<py::str>(PyUnicode_DecodeUTF8(s.data(), static_cast<py::ssize_t>(s.size()), "replace"));
}

}  // namespace

// Text that leaves the client: the secrets it holds (its API secret, its JWTs)
// become "***" (a hostile server may echo the Authorization header).
py::str safe_text(const std::string& s) { return text(vc::redact(s)); }

namespace {

// Raise vehicledata.errors.<cls>(message, status=..., url=..., exception=..., **extra).
void raise_error(const char* cls, const std::string& message, py::dict kwargs) {
    py::module_ errors = py::module_::import("vehicledata.errors");
    py::object type = errors.attr(cls);
    py::object exc = type(safe_text(message), **kwargs);
    PyErr_SetObject(type.ptr(), exc.ptr());
}

// The exception a Python signal handler raised while a request waited (KeyboardInterrupt from the
// default SIGINT handler, or SystemExit, TimeoutError... from the program's own handlers): kept by
// the interrupt check, which runs on the calling thread, and raised again as raised by translate()
// on that same thread once the C++ call has unwound.  Both run with the GIL held.
struct SignalError {
    PyObject* type = nullptr;
    PyObject* value = nullptr;
    PyObject* traceback = nullptr;
};
thread_local SignalError signal_error;

void keep_signal_error() {
    SignalError& e = signal_error;
    Py_XDECREF(e.type);
    Py_XDECREF(e.value);
    Py_XDECREF(e.traceback);
    PyErr_Fetch(&e.type, &e.value, &e.traceback);
}

bool restore_signal_error() {
    SignalError& e = signal_error;
    if (e.type == nullptr) return false;
    PyErr_Restore(e.type, e.value, e.traceback);  // steals the references
    e = SignalError{};
    return true;
}

// The crawl of this thread may be cancelled by another (CancelToken, set_thread_cancel): the part
// crawls of api.vehicles, stopped when the call they belong to fails or is interrupted.
thread_local std::shared_ptr<CancelToken> thread_cancel;

bool thread_cancelled() { return thread_cancel && thread_cancel->cancelled.load(std::memory_order_relaxed); }

void translate(std::exception_ptr p) {
    try {
        if (p) std::rethrow_exception(p);
    } catch (const vc::ApiError& e) {
        py::module_ errors = py::module_::import("vehicledata.errors");
        py::object exception = e.exception.empty() ? py::object(py::none()) : py::object(safe_text(e.exception));
        // 414: the request target was too long for the server; a bad request of ours.
        py::object type = e.status == 414 ? errors.attr("BadRequestError")
                                          : errors.attr("error_for_status")(e.status, exception);
        py::dict kw;
        kw["status"] = e.status;
        kw["url"] = safe_text(e.url);
        kw["exception"] = exception;
        if (e.status == 429 || e.retry_after) kw["retry_after"] = e.retry_after ? py::cast(*e.retry_after) : py::none();
        py::object exc = type(safe_text(e.what()), **kw);
        PyErr_SetObject(type.ptr(), exc.ptr());
    } catch (const vc::TransportError& e) {
        py::dict kw;
        kw["url"] = safe_text(e.url);
        kw["curl_code"] = e.curl_code;
        raise_error(e.timeout ? "Timeout" : "TransportError", e.what(), kw);
    } catch (const vc::DecodeError& e) {
        py::dict kw;
        kw["url"] = safe_text(e.url);
        kw["position"] = e.position == vc::DecodeError::npos ? py::none() : py::cast(e.position);
        raise_error("DecodeError", e.what(), kw);
    } catch (const vc::LimitError& e) {
        py::dict kw;
        kw["url"] = safe_text(e.url);
        kw["limit"] = e.limit;
        raise_error("LimitError", e.what(), kw);
    } catch (const vc::PaginationError& e) {
        py::dict kw;
        kw["url"] = safe_text(e.url);
        raise_error("PaginationError", e.what(), kw);
    } catch (const std::bad_alloc&) {
        raise_error("LimitError", "out of memory while decoding an answer", py::dict(py::arg("limit") = "memory"));
    } catch (const vc::Interrupted&) {
        if (restore_signal_error()) return;
        if (thread_cancelled()) {
            py::object cancelled = py::module_::import("concurrent.futures").attr("CancelledError");
            PyErr_SetString(cancelled.ptr(), "cancelled: the call this crawl belongs to failed or was interrupted");
            return;
        }
        PyErr_SetNone(PyExc_KeyboardInterrupt);
    }
}

// ---- page -> Python -----------------------------------------------------------
template <class T>
py::array view(const std::vector<T>& v, py::handle owner) {
    return py::array_t<T>({static_cast<py::ssize_t>(v.size())}, {static_cast<py::ssize_t>(sizeof(T))}, v.data(), owner);
}

py::array bytes_view(const std::string& s, py::handle owner) {
    return py::array_t<std::uint8_t>({static_cast<py::ssize_t>(s.size())}, {static_cast<py::ssize_t>(1)},
                                     reinterpret_cast<const std::uint8_t*>(s.data()), owner);
}

py::array bool_view(const std::vector<std::uint8_t>& v, py::handle owner) {
    return py::array(py::dtype("bool"), {static_cast<py::ssize_t>(v.size())}, {static_cast<py::ssize_t>(1)}, v.data(), owner);
}

py::dict collection_dict(const vc::Collection& c) {
    py::dict d;
    if (!c.present) return d;
    for (const auto& m : vehicledata::envelope::kCollectionMembers) {
        const py::str key(m.name.data(), m.name.size());
        if (m.text) d[key] = c.*m.text;
        else d[key] = c.*m.number;
    }
    return d;
}

// One Python list per column: int, float, str, datetime (with its offset),
// parsed JSON for nested values, None for nulls.
py::dict page_lists(const vc::Page& page) {
    py::dict out;
    TzCache tz;
    py::object loads = py::module_::import("json").attr("loads");
    for (const auto& c : page.columns) {
        const std::size_t n = c.size();
        py::list l(n);
        for (std::size_t i = 0; i < n; ++i) {
            py::object v = py::reinterpret_steal<py::object>(cell(c, i, tz));
            if (!v) throw py::error_already_set();
            if (c.kind == vc::ColumnKind::Json && !v.is_none()) v = loads(v);
            PyList_SET_ITEM(l.ptr(), static_cast<py::ssize_t>(i), v.release().ptr());
        }
        out[py::str(c.name)] = l;
    }
    return out;
}

py::list page_columns(py::object self) {
    const vc::Page& page = self.cast<const vc::Page&>();
    py::list out;
    for (const auto& c : page.columns) {
        py::dict d;
        d["name"] = c.name;
        d["type"] = std::string(sc::type_name(c.type));
        d["kind"] = kind_name(c.kind);
        d["valid"] = bool_view(c.valid, self);
        d["null_count"] = c.null_count;
        switch (c.kind) {
            case vc::ColumnKind::Int64: case vc::ColumnKind::Bool: d["values"] = view(c.ints, self); break;
            case vc::ColumnKind::Float64: d["values"] = view(c.floats, self); break;
            case vc::ColumnKind::Timestamp:
                d["values"] = view(c.ints, self);
                d["utc_offset_minutes"] = view(c.utc_offset_minutes, self);
                break;
            case vc::ColumnKind::String: case vc::ColumnKind::Json:
                d["offsets"] = view(c.offsets, self);
                d["data"] = bytes_view(c.bytes, self);
                break;
        }
        out.append(d);
    }
    return out;
}

// The crawl a batch belongs to: page `first_number` and the numbers of the
// targets (default: the pages after it).
vc::Crawl crawl_of(const vc::Page& first, std::int64_t first_number, std::optional<std::vector<std::int64_t>> numbers,
                   std::size_t targets) {
    vc::Crawl crawl{vc::paging_of(first, first_number), {}};
    if (numbers) {
        if (numbers->size() != targets) throw py::value_error("numbers must give one page number per target");
        crawl.numbers = std::move(*numbers);
    } else {
        for (std::size_t i = 0; i < targets; ++i) crawl.numbers.push_back(first_number + 1 + static_cast<std::int64_t>(i));
    }
    return crawl;
}

// What frames._FastFrames takes from a page for its numeric columns, one entry
// per column (the leaner counterpart of page_columns: no dicts, no names):
//   int64     -> (values, mask)   values a writable int64 view of the page, mask a new bool array (True: null)
//   bool      -> (values, mask)   values a new bool array
//   float64   -> values           a writable float64 view (NaN for nulls, as decoded)
//   timestamp -> values           datetime64[us] of shape (1, rows): a writable view, or a copy with NaT
//                                 for the nulls when there are any
//   string, json (text, dates: taken from the Arrow export) -> None
py::array new_bools(std::size_t n) {
    return py::array(py::dtype::of<bool>(), {static_cast<py::ssize_t>(n)}, {static_cast<py::ssize_t>(1)});
}

py::array null_mask(const vc::Column& c) {
    py::array mask = new_bools(c.size());
    auto* m = static_cast<std::uint8_t*>(mask.mutable_data());
    for (std::size_t i = 0; i < c.size(); ++i) m[i] = c.valid[i] ? 0 : 1;
    return mask;
}

py::list page_pandas_values(py::object self) {
    const vc::Page& page = self.cast<const vc::Page&>();
    // Kept for the process.  Not a plain function-local static: its initialiser (numpy's first use)
    // releases the GIL inside, and a second thread (AsyncPager's frames are built on worker threads)
    // holding the GIL while it waits on the static's guard deadlocked both.
    PYBIND11_CONSTINIT static py::gil_safe_call_once_and_store<py::object> micros_once;
    PyObject* const micros =
        micros_once.call_once_and_store_result([] { return py::object(py::dtype("M8[us]")); }).get_stored().ptr();
    py::list out(page.columns.size());
    std::size_t k = 0;
    for (const auto& c : page.columns) {
        const auto n = static_cast<py::ssize_t>(c.size());
        py::object item = py::none();
        switch (c.kind) {
            case vc::ColumnKind::Int64: item = py::make_tuple(view(c.ints, self), null_mask(c)); break;
            case vc::ColumnKind::Float64: item = view(c.floats, self); break;
            case vc::ColumnKind::Bool: {
                py::array values = new_bools(c.size());
                auto* v = static_cast<std::uint8_t*>(values.mutable_data());
                for (std::size_t i = 0; i < c.size(); ++i) v[i] = c.ints[i] != 0;
                item = py::make_tuple(std::move(values), null_mask(c));
                break;
            }
            case vc::ColumnKind::Timestamp: {
                const py::dtype dt = py::reinterpret_borrow<py::dtype>(micros);
                const std::vector<py::ssize_t> shape{1, n}, strides{n * 8, 8};
                if (!c.null_count) {
                    item = py::array(dt, shape, strides, c.ints.data(), self);
                } else {
                    py::array values(dt, shape, strides);
                    auto* v = static_cast<std::int64_t*>(values.mutable_data());
                    for (std::size_t i = 0; i < c.size(); ++i)
                        v[i] = c.valid[i] ? c.ints[i] : std::numeric_limits<std::int64_t>::min();  // NaT
                    item = std::move(values);
                }
                break;
            }
            case vc::ColumnKind::String: case vc::ColumnKind::Json: break;
        }
        PyList_SET_ITEM(out.ptr(), static_cast<py::ssize_t>(k++), item.release().ptr());
    }
    return out;
}

}  // namespace

bool python_finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsFinalizing() != 0;
#else
    return _Py_IsFinalizing() != 0;
#endif
}

std::shared_ptr<py::object> attach_logger(vc::Client& client, py::object logger) {
    auto keep = std::shared_ptr<py::object>(new py::object(logger), [](py::object* p) {
        if (python_finalizing()) return;  // leaked: see python_finalizing()
        py::gil_scoped_acquire g;
        delete p;
    });
    if (!logger.is_none()) {
        std::shared_ptr<py::object> lg = keep;
        client.set_logger([lg](int level, const std::string& msg) {
            if (python_finalizing()) return;
            py::gil_scoped_acquire g;
            try {
                (*lg)(level, text(msg));
            } catch (py::error_already_set& e) {
                // Python's logging keeps its handlers' errors to itself: what escapes is the exception
                // of a signal handler that ran in this call (Ctrl-C while a line was logged on the main
                // thread). Kept, and raised as raised by the call's next interrupt check.
                e.restore();
                keep_signal_error();
            }
        });
    }
    return keep;
}

py::dict response_dict(const vc::Response& r) {
    py::dict d;
    d["status"] = r.status;
    d["url"] = r.url;
    d["content_type"] = r.content_type;
    d["http_version"] = r.http_version;
    d["body"] = py::bytes(r.body);
    return d;
}

py::dict download_dict(const vc::DownloadResult& res) {
    py::dict d;
    d["bytes"] = res.bytes;
    d["resumed"] = res.resumed;
    d["content_type"] = res.content_type;
    return d;
}

py::dict stats_dict(const vc::ClientStats& s) {
    py::dict d;
    d["requests"] = s.requests;
    d["retries"] = s.retries;
    d["logins"] = s.logins;
    d["bytes"] = s.bytes;
    d["rate_wait_seconds"] = s.rate_wait_seconds;
    d["reorder_peak"] = s.reorder_peak;
    d["cache_hits"] = s.cache_hits;
    return d;
}

py::object error_object(std::exception_ptr error) {
    try {
        std::rethrow_exception(error);
    } catch (py::error_already_set& e) {
        return e.value();
    } catch (...) {
    }
    try {
        translate(error);  // sets the Python error of the client's exceptions
    } catch (...) {
    }
    if (!PyErr_Occurred()) {  // a C++ exception translate() does not know
        try {
            std::rethrow_exception(error);
        } catch (const std::exception& e) {
            PyErr_SetString(PyExc_RuntimeError, e.what());
        } catch (...) {
            PyErr_SetString(PyExc_RuntimeError, "unknown C++ exception");
        }
    }
    py::error_already_set e;
    return e.value();
}

bool interrupt_requested() {
    if (thread_cancelled() || signal_error.type != nullptr) return true;  // no GIL needed
    py::gil_scoped_acquire g;
    if (PyErr_CheckSignals() != 0) {
        keep_signal_error();  // raised again as raised when the Interrupted reaches translate()
        return true;
    }
    return false;
}

namespace {

// The Python-facing client: the C++ client plus the Python logger.
struct PyClient {
    std::unique_ptr<vc::Client> client;
    std::shared_ptr<py::object> logger;  // callable(level, message) or None
};

std::unique_ptr<PyClient> make_client(vc::ClientOptions o, py::object logger) {
    vc::validate(o.retry);
    auto pc = std::make_unique<PyClient>();
    pc->client = std::make_unique<vc::Client>(std::move(o));
    pc->logger = attach_logger(*pc->client, logger);
    pc->client->set_interrupt_check(&interrupt_requested);
    return pc;
}

}  // namespace

void bind_page_arrow(py::module_& client);  // arrow_bindings.cpp
void bind_records(py::module_& client);     // record_bindings.cpp

void bind_client(py::module_& m) {
    py::register_exception_translator(&translate);
    py::module_ c = m.def_submodule("client", "libcurl transport, retries, JWT cache, simdjson page decoder");
    c.attr("DEFAULT_BASE_URL") = vc::kDefaultBaseUrl;
    c.attr("USER_AGENT") = std::string("vehicledata/") + VEHICLEDATA_VERSION;
    c.def("library_versions", [] {
        py::list out;
        for (const auto& v : vc::library_versions()) out.append(py::make_tuple(v.name, v.version, v.detail));
        return out;
    }, "[(name, version, detail)] of libcurl, simdjson, SQLite and OpenSSL as linked (vd.show_versions()).");
    bind_client_options(c);

    py::class_<vc::Page, std::shared_ptr<vc::Page>>(c, "Page", "One decoded page: typed columns of one record type.")
        .def_property_readonly("rows", [](const vc::Page& p) { return p.rows; })
        .def_property_readonly("url", [](const vc::Page& p) { return p.url; })
        .def_property_readonly("record", [](const vc::Page& p) { return p.record; })
        .def_property_readonly("body_bytes", [](const vc::Page& p) { return p.body_bytes; })
        .def_property("synthetic", [](const vc::Page& p) { return p.synthetic; },
                      [](vc::Page& p, std::vector<std::string> fields) { p.synthetic = std::move(fields); },
                      "Fields the emulator's X-Emulator-Synthetic header named (no public source; nested members "
                      "as 'field.member'); [] for the live service.")
        .def_property_readonly("collection", [](const vc::Page& p) { return collection_dict(p.collection); },
                               "The envelope's paging block as a dict ({} for bare arrays and objects).")
        .def_property_readonly("column_names", [](const vc::Page& p) {
            std::vector<std::string> out;
            for (const auto& col : p.columns) out.push_back(col.name);
            return out;
        })
        .def("columns", &page_columns,
             "Column buffers as numpy arrays viewing the page (no copy): a list of dicts with name, type, kind, "
             "valid, null_count and values (int64/float64/timestamp) or offsets+data (string/json).")
        .def("_pandas_values", &page_pandas_values,
             "The numeric columns as frames._FastFrames takes them, one entry per column: (values, mask) for "
             "int64 and bool, values for float64, datetime64[us] of shape (1, rows) for timestamps, None for text.")
        .def("to_lists", &page_lists, "Python lists per column (datetime with offset, parsed JSON for nested).")
        .def("nbytes", [](const vc::Page& p) {
            std::size_t n = 0;
            for (const auto& col : p.columns)
                n += col.ints.size() * 8 + col.floats.size() * 8 + col.offsets.size() * 4 + col.bytes.size() +
                     col.utc_offset_minutes.size() * 2 + col.valid.size();
            return n;
        }, "Bytes held by the column buffers.")
        .def("__repr__", [](const vc::Page& p) {
            return "<Page " + p.record + " rows=" + std::to_string(p.rows) + " url=" + p.url + ">";
        })
        .def("copy", [](const vc::Page& p) { return std::make_shared<vc::Page>(p); },
             "A deep copy (concat() empties its sources: copy a page you keep).");
    bind_page_arrow(c);
    bind_records(c);
    bind_engine(c);

    c.def("decode", [](py::bytes body, const std::string& record, const std::string& shape, const std::string& url,
                       bool verbose, std::optional<std::vector<std::string>> fields) {
        char* data = nullptr;
        py::ssize_t size = 0;
        if (PyBytes_AsStringAndSize(body.ptr(), &data, &size) != 0) throw py::error_already_set();
        // The body with simdjson's padding, in this thread's buffer (kept up to 1 MiB between calls:
        // a small page's decode makes no allocation of its size and no free).
        thread_local std::string text;
        text.reserve(static_cast<std::size_t>(size) + 64);  // simdjson padding, no second copy
        text.assign(data, static_cast<std::size_t>(size));
        struct Trim {
            ~Trim() { if (text.capacity() > (std::size_t{1} << 20)) std::string().swap(text); }
        } trim;
        std::optional<sc::Record> held;
        const sc::Record& r = decoded_record(record, fields, held);
        sc::Shape s = shape_of(shape);
        py::gil_scoped_release nogil;
        return std::make_shared<vc::Page>(vc::decode_page(text, r, s, url, verbose));
    }, py::arg("body"), py::arg("record"), py::arg("shape") = "envelope", py::arg("url") = "", py::arg("verbose") = false,
       py::arg("fields") = py::none(),
       "Decode a body into a Page (raises DecodeError with the position); `fields`: decode only these fields of "
       "the record (None: all).");

    c.def("concat", [](std::vector<std::shared_ptr<vc::Page>> pages) {
        std::vector<vc::Page*> raw;
        for (auto& p : pages) raw.push_back(p.get());
        py::gil_scoped_release nogil;
        try {
            return std::make_shared<vc::Page>(vc::concat_pages(raw));
        } catch (const std::invalid_argument& e) {
            throw py::value_error(e.what());
        }
    }, py::arg("pages"), "Concatenate pages of one record; the sources are emptied as they are copied.");

    c.def("gather", [](const std::vector<py::tuple>& sources, std::size_t rows, std::string record) {
        std::vector<std::shared_ptr<vc::Page>> keep;  // the pages stay alive while the GIL is released
        std::vector<vc::ColumnSource> in;
        for (const py::tuple& t : sources) {
            if (t.size() != 4) throw py::value_error("gather: each source is (page, rows or None, names, as)");
            vc::ColumnSource s;
            keep.push_back(t[0].cast<std::shared_ptr<vc::Page>>());
            s.page = keep.back().get();
            if (t[1].is_none()) {
                s.all_rows = true;
            } else {
                auto rows_arr = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(t[1]);
                if (!rows_arr || rows_arr.ndim() != 1) throw py::value_error("gather: rows must be a 1-d array of int64");
                s.rows.assign(rows_arr.data(), rows_arr.data() + rows_arr.size());
            }
            s.names = t[2].cast<std::vector<std::string>>();
            s.as = t[3].cast<std::vector<std::string>>();
            in.push_back(std::move(s));
        }
        py::gil_scoped_release nogil;
        try {
            return std::make_shared<vc::Page>(vc::gather_columns(in, rows, std::move(record)));
        } catch (const std::invalid_argument& e) {
            throw py::value_error(e.what());
        }
    }, py::arg("sources"), py::arg("rows"), py::arg("record"),
       "A page of `rows` rows gathered from sources [(page, rows: int64 array (-1: null) or None: every row, "
       "column names, their names in the result)], in order (a join on computed row indices, or a filter).");

    c.def("join", [](std::shared_ptr<vc::Page> left, std::string left_key, std::vector<std::string> names,
                     std::vector<std::string> as, const std::vector<py::tuple>& rights, std::string record) {
        std::vector<std::shared_ptr<vc::Page>> keep;  // the pages stay alive while the GIL is released
        std::vector<vc::JoinSource> in;
        for (const py::tuple& t : rights) {
            if (t.size() != 4) throw py::value_error("join: each right side is (page, key, names, as)");
            vc::JoinSource s;
            keep.push_back(t[0].cast<std::shared_ptr<vc::Page>>());
            s.page = keep.back().get();
            s.key = t[1].cast<std::string>();
            s.names = t[2].cast<std::vector<std::string>>();
            s.as = t[3].cast<std::vector<std::string>>();
            in.push_back(std::move(s));
        }
        if (!left) throw py::value_error("join: no left page");
        py::gil_scoped_release nogil;
        try {
            return std::make_shared<vc::Page>(vc::join_columns(*left, left_key, names, as, in, std::move(record)));
        } catch (const std::invalid_argument& e) {
            throw py::value_error(e.what());
        }
    }, py::arg("left"), py::arg("left_key"), py::arg("names"), py::arg("as_"), py::arg("rights"), py::arg("record"),
       "A left outer join on integer keys: every row of `left` (its columns `names`, named `as_`), then each right "
       "side's columns [(page, key column, names, their names in the result)] at its first row whose key equals "
       "left's `left_key` (nulls where none), in one hash lookup per row, GIL released.");

    c.def("parse_timestamp", [](const std::string& text) -> py::object {
        std::int64_t us;
        int off;
        if (!vc::parse_timestamp(text, us, off)) return py::none();
        return py::make_tuple(us, off);
    }, py::arg("text"), "ISO 8601 -> (epoch microseconds, UTC offset minutes), or None.");

    c.def("check_paging", [](const vc::Page& page, std::int64_t number, const vc::Page* first, std::int64_t first_number) {
        if (!first) return vc::check_paging(page, number, nullptr);
        const vc::Paging base = vc::paging_of(*first, first_number);
        vc::check_paging(page, number, &base);
    }, py::arg("page"), py::arg("number"), py::arg("first") = nullptr, py::arg("first_number") = 1,
       "Raise PaginationError when page `number` contradicts itself or `first` (page `first_number` of its crawl).");

    c.def("link_page", &vc::link_page, py::arg("link"),
          "The `page` parameter of a link (1 when absent), None for an empty link; PaginationError if not a number.");

    c.def("parse_retry_after", [](const std::string& value, std::int64_t now) -> py::object {
        auto v = vc::parse_retry_after(value, now);
        return v ? py::cast(*v) : py::none();
    }, py::arg("value"), py::arg("now"), "Retry-After (seconds or HTTP date) -> seconds, or None.");

    py::class_<vc::WaitBudget, std::shared_ptr<vc::WaitBudget>>(
        c, "WaitBudget", "The retry sleeps of one call (a crawl), added up: past the policy's max_wait in total the "
                         "call's next retry is refused (its error raised).  Pass the same one to each request of the call.")
        .def(py::init<>())
        .def_property_readonly("waited", &vc::WaitBudget::waited, "Seconds of sleep approved so far.");

    py::class_<CancelToken, std::shared_ptr<CancelToken>>(
        c, "CancelToken", "Cancels the client calls of the threads it is set on (set_thread_cancel): their next "
                          "interrupt check (at most 100 ms away) stops them with concurrent.futures.CancelledError.")
        .def(py::init<>())
        .def("cancel", [](CancelToken& t) { t.cancelled.store(true, std::memory_order_relaxed); })
        .def_property_readonly("cancelled", [](const CancelToken& t) { return t.cancelled.load(std::memory_order_relaxed); });
    c.def("set_thread_cancel", [](std::shared_ptr<CancelToken> token) {
              std::shared_ptr<CancelToken> previous = std::move(thread_cancel);
              thread_cancel = std::move(token);
              return previous;
          }, py::arg("token").none(true),
          "Sets the CancelToken of the calling thread's client calls (None: none); returns the previous one.");

    py::class_<PyClient>(c, "Client", "The C++ client core (use vehicledata.Client).")
        .def(py::init(&make_client), py::arg("options"), py::arg("logger") = py::none(),
             "A client with these ClientOptions; `logger`: callable(level, message) or None.")
        .def_property_readonly("base_url", [](const PyClient& p) { return p.client->options().base_url; })
        .def_property_readonly("has_credentials", [](const PyClient& p) { return p.client->has_credentials(); })
        .def_property_readonly("has_token", [](const PyClient& p) { return p.client->has_token(); })
        .def_property_readonly("token_expires_at", [](const PyClient& p) { return p.client->token_expires_at(); })
        .def("login", [](PyClient& p) {
            py::gil_scoped_release nogil;
            p.client->login();
        })
        .def("get", [](PyClient& p, const std::string& target) {
            vc::Response r;
            {
                py::gil_scoped_release nogil;
                r = p.client->get(target);
            }
            return response_dict(r);
        }, py::arg("target"), "GET with auth, retries and the rate limit; returns status, url, content_type, body.")
        .def("get_page", [](PyClient& p, const std::string& target, const std::string& record, const std::string& shape,
                            bool verbose, std::shared_ptr<vc::WaitBudget> budget,
                            std::optional<std::vector<std::string>> fields) {
            std::optional<sc::Record> held;
            const sc::Record& r = decoded_record(record, fields, held);
            sc::Shape s = shape_of(shape);
            py::gil_scoped_release nogil;
            return std::make_shared<vc::Page>(p.client->get_page(target, r, s, verbose, budget.get()));
        }, py::arg("target"), py::arg("record"), py::arg("shape") = "envelope", py::arg("verbose") = false,
           py::arg("budget") = nullptr, py::arg("fields") = py::none(),
           "One page; `budget`: the WaitBudget of the call it belongs to (or None); `fields`: decode only these "
           "fields of the record (None: all).")
        .def("get_pages", [](PyClient& p, const std::vector<std::string>& targets, const std::string& record,
                             const std::string& shape, bool verbose, const vc::Page* first, std::int64_t first_number,
                             std::optional<std::vector<std::int64_t>> numbers, std::shared_ptr<vc::WaitBudget> budget,
                             std::optional<std::vector<std::string>> fields) {
            std::optional<sc::Record> held;
            const sc::Record& r = decoded_record(record, fields, held);
            sc::Shape s = shape_of(shape);
            std::optional<vc::Crawl> crawl;
            if (first) crawl = crawl_of(*first, first_number, std::move(numbers), targets.size());
            std::vector<vc::Page> pages;
            {
                py::gil_scoped_release nogil;
                pages = p.client->get_pages(targets, r, s, verbose, crawl ? &*crawl : nullptr, budget.get());
            }
            std::vector<std::shared_ptr<vc::Page>> out;
            for (auto& pg : pages) out.push_back(std::make_shared<vc::Page>(std::move(pg)));
            return out;
        }, py::arg("targets"), py::arg("record"), py::arg("shape") = "envelope", py::arg("verbose") = false,
           py::arg("first") = nullptr, py::arg("first_number") = 1, py::arg("numbers") = py::none(),
           py::arg("budget") = nullptr, py::arg("fields") = py::none(),
           "Fetch pages concurrently (curl multi, inside the token bucket); results in input order.  With `first` "
           "(page `first_number` of the crawl) each page, numbered by `numbers`, is checked against it as it arrives "
           "(PaginationError); `fields`: decode only these fields of the record (None: all).")
        .def("fetch_pages_settled", [](PyClient& p, const std::vector<std::string>& targets, const std::string& record,
                                       const std::string& shape, bool verbose, int parallel, py::function on_done) {
            const sc::Record& r = record_of(record);
            sc::Shape s = shape_of(shape);
            py::gil_scoped_release nogil;
            p.client->fetch_pages(
                targets, r, s,
                [&](std::size_t i, vc::Page&& page) {
                    py::gil_scoped_acquire g;
                    on_done(i, std::make_shared<vc::Page>(std::move(page)), py::none(), py::none());
                },
                verbose, 0, nullptr,
                [&](std::size_t i, const vc::ApiError& e) {
                    py::gil_scoped_acquire g;
                    on_done(i, py::none(), e.status, safe_text(e.what()));
                },
                parallel);
        }, py::arg("targets"), py::arg("record"), py::arg("shape"), py::arg("verbose"), py::arg("parallel"),
           py::arg("on_done"),
           "Fetch targets concurrently (curl multi, inside the token bucket, retries per target) and call "
           "`on_done(index, page, None, None)` as each arrives, or `on_done(index, None, status, message)` for "
           "one the server refuses (4xx other than 401/403/429): the batch goes on (api.vin.decode_many).")
        .def("collect_pages", [](PyClient& p, const vc::Page& first, const std::vector<std::string>& targets,
                                 const std::string& record, const std::string& shape, bool verbose,
                                 std::int64_t first_number, std::optional<std::vector<std::int64_t>> numbers,
                                 std::shared_ptr<vc::WaitBudget> budget, std::optional<std::vector<std::string>> fields) {
            std::optional<sc::Record> held;
            const sc::Record& r = decoded_record(record, fields, held);
            sc::Shape s = shape_of(shape);
            vc::Crawl crawl = crawl_of(first, first_number, std::move(numbers), targets.size());
            py::gil_scoped_release nogil;
            return std::make_shared<vc::Page>(p.client->collect_pages(first, targets, r, s, verbose, &crawl, budget.get()));
        }, py::arg("first"), py::arg("targets"), py::arg("record"), py::arg("shape") = "envelope",
           py::arg("verbose") = false, py::arg("first_number") = 1, py::arg("numbers") = py::none(),
           py::arg("budget") = nullptr, py::arg("fields") = py::none(),
           "Fetch targets concurrently and append them in order to a copy of `first` (page `first_number`), checking "
           "each (numbered by `numbers`, default the pages after `first`) as it arrives (PaginationError); `fields`: "
           "decode only these fields of the record (None: all, as `first` was decoded).")
        .def("download", [](PyClient& p, const std::string& target, const std::string& path, bool resume,
                            py::object progress, double timeout, std::int64_t max_bytes) {
            vc::ProgressFn fn;
            std::shared_ptr<py::object> prog;
            if (!progress.is_none()) {
                prog = std::shared_ptr<py::object>(new py::object(progress), [](py::object* o) {
                    py::gil_scoped_acquire g;
                    delete o;
                });
                fn = [prog](std::int64_t done, std::int64_t total) {
                    py::gil_scoped_acquire g;
                    try {
                        (*prog)(done, total);
                    } catch (py::error_already_set& e) {
                        e.discard_as_unraisable("vehicledata progress callback");
                    }
                };
            }
            vc::DownloadResult res;
            {
                py::gil_scoped_release nogil;
                res = p.client->download(target, path, resume, fn, timeout, max_bytes);
            }
            return download_dict(res);
        }, py::arg("target"), py::arg("path"), py::arg("resume") = true, py::arg("progress") = py::none(),
           py::arg("timeout") = 0.0, py::arg("max_bytes") = 0)
        .def("stats", [](const PyClient& p) { return stats_dict(p.client->stats()); })
        .def("url_for", [](const PyClient& p, const std::string& t) { return p.client->url_for(t); })
        .def("__repr__", [](const PyClient& p) {
            return "<vehicledata._core.client.Client base_url=" + p.client->options().base_url +
                   (p.client->has_credentials() ? " authenticated" : " anonymous") + ">";
        });
}

}  // namespace vehicledata::bindings
