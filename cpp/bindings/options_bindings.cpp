// vehicledata._core.client.Retry and .ClientOptions: the C++ RetryPolicy and
// ClientOptions bound as classes, so the client's options have one spelling
// (cpp/include/vehicledata/client/{retry,client}.h) and no kwargs parsing.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>

#include "vehicledata/client/client.h"
#include "vehicledata/client/retry.h"

namespace py = pybind11;
namespace vc = vehicledata::client;

namespace vehicledata::bindings {
namespace {

std::set<int> status_set(py::iterable statuses) {
    std::set<int> out;
    for (auto s : statuses) out.insert(py::int_(py::reinterpret_borrow<py::object>(s)).cast<int>());
    return out;
}

py::frozenset frozen(const std::set<int>& s) {
    py::set out;
    for (int v : s) out.add(py::int_(v));
    return py::frozenset(out);
}

vc::RetryPolicy make_retry(int total, double backoff_factor, double backoff_max, double backoff_jitter,
                           py::iterable status_forcelist, bool respect_retry_after, double max_wait,
                           bool retry_transport_errors) {
    vc::RetryPolicy p;
    p.total = total;
    p.backoff_factor = backoff_factor;
    p.backoff_max = backoff_max;
    p.backoff_jitter = backoff_jitter;
    p.status_forcelist = status_set(status_forcelist);
    p.respect_retry_after = respect_retry_after;
    p.max_wait = max_wait;
    p.retry_transport_errors = retry_transport_errors;
    vc::validate(p);  // std::invalid_argument -> ValueError
    return p;
}

py::tuple retry_state(const vc::RetryPolicy& p) {
    return py::make_tuple(p.total, p.backoff_factor, p.backoff_max, p.backoff_jitter, frozen(p.status_forcelist),
                          p.respect_retry_after, p.max_wait, p.retry_transport_errors);
}

void bind_retry(py::module_& c) {
    const vc::RetryPolicy d;  // the defaults, spelled once in retry.h
    py::class_<vc::RetryPolicy> cls(c, "Retry", R"(Retry policy with urllib3's vocabulary (docs/client.md, "Retries").

    >>> Retry(total=5, backoff_factor=1.0, status_forcelist={429, 502, 503})

The sleep before retry *n* is ``min(backoff_factor * 2**(n-1), backoff_max)``
plus ``uniform(0, backoff_jitter)``; on a status in ``status_forcelist`` a
``Retry-After`` header (seconds or HTTP date) replaces it when
``respect_retry_after``.  A sleep that would take the request's total of
sleeps past ``max_wait`` raises the error instead of sleeping.  Every failure of a request (status, transfer,
body that did not decode) draws on one budget of ``total`` retries.  Every
sleep is logged on the ``vehicledata`` logger (WARNING past 2 s); Ctrl-C interrupts it.
Immutable; the C++ RetryPolicy the client runs.)");
    cls.def(py::init(&make_retry), py::arg("total") = d.total, py::arg("backoff_factor") = d.backoff_factor,
            py::arg("backoff_max") = d.backoff_max, py::arg("backoff_jitter") = d.backoff_jitter,
            py::arg("status_forcelist") = frozen(d.status_forcelist), py::arg("respect_retry_after") = d.respect_retry_after,
            py::arg("max_wait") = d.max_wait, py::arg("retry_transport_errors") = d.retry_transport_errors)
        .def_property_readonly("total", [](const vc::RetryPolicy& p) { return p.total; })
        .def_property_readonly("backoff_factor", [](const vc::RetryPolicy& p) { return p.backoff_factor; })
        .def_property_readonly("backoff_max", [](const vc::RetryPolicy& p) { return p.backoff_max; })
        .def_property_readonly("backoff_jitter", [](const vc::RetryPolicy& p) { return p.backoff_jitter; })
        .def_property_readonly("status_forcelist", [](const vc::RetryPolicy& p) { return frozen(p.status_forcelist); })
        .def_property_readonly("respect_retry_after", [](const vc::RetryPolicy& p) { return p.respect_retry_after; })
        .def_property_readonly("max_wait", [](const vc::RetryPolicy& p) { return p.max_wait; })
        .def_property_readonly("retry_transport_errors", [](const vc::RetryPolicy& p) { return p.retry_transport_errors; })
        .def("backoff", &vc::backoff_seconds, py::arg("retry"),
             "The exponential sleep (without jitter) before retry number ``retry`` (1-based).")
        .def_static("coerce", [](py::object value) -> vc::RetryPolicy {
            if (value.is_none() || value.is(py::bool_(true))) return vc::RetryPolicy{};
            if (py::isinstance<vc::RetryPolicy>(value)) return value.cast<vc::RetryPolicy>();
            vc::RetryPolicy p;
            if (value.is(py::bool_(false))) {
                p.total = 0;
                return p;
            }
            if (py::isinstance<py::int_>(value)) {
                p.total = value.cast<int>();
                vc::validate(p);
                return p;
            }
            throw py::type_error("retry must be a Retry, an int or None, not " +
                                 py::str(py::type::of(value).attr("__name__")).cast<std::string>());
        }, py::arg("value"), "``None``/``True``: defaults; an int: that many retries; ``False``/0: no retries.")
        .def("__eq__", [](const vc::RetryPolicy& a, py::object b) {
            return py::isinstance<vc::RetryPolicy>(b) && retry_state(a).equal(retry_state(b.cast<vc::RetryPolicy>()));
        })
        .def("__hash__", [](const vc::RetryPolicy& p) { return py::hash(retry_state(p)); })
        .def("__repr__", [](const vc::RetryPolicy& p) {
            return "Retry(total=" + std::to_string(p.total) + ", backoff_factor=" + py::repr(py::float_(p.backoff_factor)).cast<std::string>() +
                   ", backoff_max=" + py::repr(py::float_(p.backoff_max)).cast<std::string>() +
                   ", backoff_jitter=" + py::repr(py::float_(p.backoff_jitter)).cast<std::string>() +
                   ", status_forcelist=" + py::repr(frozen(p.status_forcelist)).cast<std::string>() +
                   ", respect_retry_after=" + (p.respect_retry_after ? "True" : "False") +
                   ", max_wait=" + py::repr(py::float_(p.max_wait)).cast<std::string>() +
                   ", retry_transport_errors=" + (p.retry_transport_errors ? "True" : "False") + ")";
        })
        .def(py::pickle(&retry_state, [](py::tuple t) {
            return make_retry(t[0].cast<int>(), t[1].cast<double>(), t[2].cast<double>(), t[3].cast<double>(), t[4],
                              t[5].cast<bool>(), t[6].cast<double>(), t[7].cast<bool>());
        }));
    // Public as vehicledata.Retry (repr, pickling and help() name it there).
    cls.attr("__module__") = "vehicledata";
}

// A field of the nested TransportOptions, as a flat property of ClientOptions.
template <class T>
void def_transport(py::class_<vc::ClientOptions>& cls, const char* name, T vc::TransportOptions::*field) {
    cls.def_property(name, [field](const vc::ClientOptions& o) { return o.transport.*field; },
                     [field](vc::ClientOptions& o, T v) { o.transport.*field = v; });
}

void bind_options(py::module_& c) {
    py::class_<vc::ClientOptions> cls(c, "ClientOptions",
                                      "The C++ client's options (vehicledata/client/client.h); vehicledata.Client fills "
                                      "them from its arguments.");
    cls.def(py::init<>())
        .def_readwrite("base_url", &vc::ClientOptions::base_url)
        .def_readwrite("api_token", &vc::ClientOptions::api_token)
        .def_property("api_secret", [](const vc::ClientOptions& o) { return o.api_secret.empty() ? "" : "***"; },
                      [](vc::ClientOptions& o, std::string v) { o.api_secret = std::move(v); },
                      "Write-only: reads as '***' once set.")
        .def_readwrite("retry", &vc::ClientOptions::retry)
        .def_readwrite("rate_limit", &vc::ClientOptions::rate_limit)
        .def_readwrite("login_rate_limit", &vc::ClientOptions::login_rate_limit)
        .def_readwrite("rate_limit_burst", &vc::ClientOptions::rate_limit_burst)
        .def_readwrite("jwt_cache_path", &vc::ClientOptions::jwt_cache_path)
        .def_readwrite("jwt_margin", &vc::ClientOptions::jwt_margin)
        .def_readwrite("max_parallel", &vc::ClientOptions::max_parallel)
        .def_readwrite("max_pages", &vc::ClientOptions::max_pages)
        .def_property("cache_dir", [](const vc::ClientOptions& o) { return o.cache.dir; },
                      [](vc::ClientOptions& o, std::string v) { o.cache.dir = std::move(v); },
                      "The response cache's directory (\"\": no cache).")
        .def_property("cache_ttl", [](const vc::ClientOptions& o) { return o.cache.ttl; },
                      [](vc::ClientOptions& o, double v) { o.cache.ttl = v; },
                      "Seconds a cached answer is served (<= 0: until evicted).")
        .def_property("cache_max_bytes", [](const vc::ClientOptions& o) { return o.cache.max_bytes; },
                      [](vc::ClientOptions& o, std::int64_t v) { o.cache.max_bytes = v; },
                      "The response cache directory's bound in bytes (least recently used files deleted past it).")
        .def_property("compress",
                      [](const vc::ClientOptions& o) -> std::optional<bool> {
                          if (o.transport.compress < 0) return std::nullopt;
                          return o.transport.compress != 0;
                      },
                      [](vc::ClientOptions& o, std::optional<bool> v) { o.transport.compress = v ? (*v ? 1 : 0) : -1; },
                      "True: ask for gzip; False: never; None: unless the host is the loopback interface.");
    def_transport(cls, "connect_timeout", &vc::TransportOptions::connect_timeout);
    def_transport(cls, "timeout", &vc::TransportOptions::timeout);
    def_transport(cls, "user_agent", &vc::TransportOptions::user_agent);
    def_transport(cls, "verify_tls", &vc::TransportOptions::verify_tls);
    def_transport(cls, "ca_bundle", &vc::TransportOptions::ca_bundle);
    def_transport(cls, "proxy", &vc::TransportOptions::proxy);
    def_transport(cls, "http2", &vc::TransportOptions::http2);
    def_transport(cls, "max_body", &vc::TransportOptions::max_body);
    def_transport(cls, "max_decompressed", &vc::TransportOptions::max_decompressed);
    def_transport(cls, "low_speed_limit", &vc::TransportOptions::low_speed_limit);
    def_transport(cls, "low_speed_time", &vc::TransportOptions::low_speed_time);
}

}  // namespace

void bind_client_options(py::module_& c) {
    bind_retry(c);
    bind_options(c);
}

}  // namespace vehicledata::bindings
