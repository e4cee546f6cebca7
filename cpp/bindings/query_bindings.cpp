// vehicledata._core.query and vehicledata._core.jwt.
//
// Conditions cross the boundary as plain dicts {"field", "op", "val"} or JSON text;
// the Python layer (vehicledata.query) builds the dicts from F(...) expressions.
// This file only converts Python values to the core's (datetimes to the service's
// Eastern text by the core's rules); every shape rule and message is the core's
// ConditionReader (docs/conditions.md).  A search calls encode(conditions, endpoint)
// once.  A C++ QueryError is raised in Python as vehicledata.errors.QueryError with
// .field, .op and .position set (None when unknown).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <datetime.h>

#include <climits>
#include <optional>
#include <string>
#include <vector>

#include "vehicledata/format.h"
#include "vehicledata/jwt.h"
#include "vehicledata/query.h"
#include "vehicledata/schema.h"

namespace py = pybind11;

namespace vehicledata::bindings {
namespace {

namespace q = vehicledata::query;
namespace sc = vehicledata::schema;

py::object none_if_empty(const std::string& s) { return s.empty() ? py::object(py::none()) : py::object(py::str(s)); }

// Raises vehicledata.errors.QueryError (imported now, so the class is the one
// users catch) for a C++ QueryError.
void set_query_error(const q::QueryError& e) {
    try {
        py::object cls = py::module_::import("vehicledata.errors").attr("QueryError");
        py::object position = e.position == q::QueryError::npos ? py::object(py::none()) : py::object(py::int_(e.position));
        py::object exc = cls(py::str(e.what()), py::arg("field") = none_if_empty(e.field),
                             py::arg("op") = none_if_empty(e.op), py::arg("position") = position);
        PyErr_SetObject(cls.ptr(), exc.ptr());
    } catch (py::error_already_set& err) {
        // vehicledata.errors could not be imported: still fail loudly, as a ValueError.
        PyErr_SetString(PyExc_ValueError, e.what());
    }
}

std::string type_name_of(const py::handle& h) { return py::str(py::type::of(h).attr("__name__")); }

// The service's text for a datetime (incl. pandas.Timestamp: US Eastern ISO 8601 with its
// offset; naive values are UTC) or a date ("YYYY-MM-DD"); nullopt for other values.
// The Eastern rules are the core's (format::eastern_iso8601).
std::optional<std::string> service_time_text(const py::handle& v) {
    if (!PyDateTimeAPI) PyDateTime_IMPORT;
    if (PyDateTime_Check(v.ptr())) {
        py::object offset = v.attr("utcoffset")();  // None when naive; raises for pandas.NaT
        std::int64_t off = 0;
        if (!offset.is_none())
            off = static_cast<std::int64_t>(PyDateTime_DELTA_GET_DAYS(offset.ptr())) * 86400 +
                  PyDateTime_DELTA_GET_SECONDS(offset.ptr());
        const std::int64_t days = format::days_from_civil(PyDateTime_GET_YEAR(v.ptr()),
                                                          static_cast<unsigned>(PyDateTime_GET_MONTH(v.ptr())),
                                                          static_cast<unsigned>(PyDateTime_GET_DAY(v.ptr())));
        const std::int64_t wall = days * 86400 + PyDateTime_DATE_GET_HOUR(v.ptr()) * 3600 +
                                  PyDateTime_DATE_GET_MINUTE(v.ptr()) * 60 + PyDateTime_DATE_GET_SECOND(v.ptr());
        return format::eastern_iso8601(wall - off);
    }
    if (PyDate_Check(v.ptr()))
        return format::date_string(format::days_from_civil(PyDateTime_GET_YEAR(v.ptr()),
                                                           static_cast<unsigned>(PyDateTime_GET_MONTH(v.ptr())),
                                                           static_cast<unsigned>(PyDateTime_GET_DAY(v.ptr()))));
    return std::nullopt;
}

// A Python value as the core's Scalar; nullopt when it is none (the reader names the problem).
// `overflow` is set for an integer outside the 64-bit range.
std::optional<q::Scalar> to_scalar(const py::handle& v, bool& overflow) {
    overflow = false;
    if (v.is_none()) return q::Scalar{};
    if (py::isinstance<py::bool_>(v)) return q::Scalar(v.cast<bool>());
    if (py::isinstance<py::str>(v)) return q::Scalar(v.cast<std::string>());
    if (py::isinstance<py::float_>(v)) return q::Scalar(v.cast<double>());
    {
        // numpy.bool_ is no Python bool and has __float__: keep it a bool, not 1.0.
        const std::string tn = type_name_of(v);
        if (tn == "bool_" || tn == "bool") {
            const int truth = PyObject_IsTrue(v.ptr());
            if (truth < 0) throw py::error_already_set();
            return q::Scalar(truth == 1);
        }
    }
    if (PyIndex_Check(v.ptr())) {  // int, numpy integers
        py::int_ i = py::reinterpret_steal<py::int_>(PyNumber_Index(v.ptr()));
        if (!i) throw py::error_already_set();
        int over = 0;
        long long n = PyLong_AsLongLongAndOverflow(i.ptr(), &over);
        if (over) {
            overflow = true;
            return std::nullopt;
        }
        if (n == -1 && PyErr_Occurred()) throw py::error_already_set();
        return q::Scalar(static_cast<std::int64_t>(n));
    }
    if (auto text = service_time_text(v)) return q::Scalar(std::move(*text));
    if (py::hasattr(v, "__float__") && !py::isinstance<py::bytes>(v)) {  // numpy floats, Decimal
        return q::Scalar(py::float_(py::reinterpret_borrow<py::object>(v)).cast<double>());
    }
    return std::nullopt;
}

// list, tuple, set and frozenset hold several values (an `in` list).
bool is_sequence(const py::handle& v) {
    return py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v) || PyAnySet_Check(v.ptr());
}

q::Kind kind_of(const py::handle& v) {
    if (is_sequence(v)) return q::Kind::Array;
    if (py::isinstance<py::dict>(v)) return q::Kind::Object;
    if (v.is_none()) return q::Kind::Null;
    if (py::isinstance<py::bool_>(v)) return q::Kind::Boolean;
    if (py::isinstance<py::str>(v)) return q::Kind::String;
    if (py::isinstance<py::int_>(v) || py::isinstance<py::float_>(v)) return q::Kind::Number;
    return q::Kind::Other;
}

// A dict {"field", "op", "val"} fed member by member to the core's ConditionReader,
// which holds every shape rule and message; this only converts the Python values.
q::Condition to_condition(const py::handle& item, std::size_t index) {
    if (!py::isinstance<py::dict>(item)) q::ConditionReader::not_an_object(index, kind_of(item), q::QueryError::npos,
                                                                             type_name_of(item));
    q::ConditionReader reader(index);
    for (auto kv : py::reinterpret_borrow<py::dict>(item)) {
        const std::string key = py::isinstance<py::str>(kv.first) ? kv.first.cast<std::string>()
                                                                  : std::string(py::str(kv.first));
        const q::ConditionReader::Member m = reader.key(key);
        py::handle v = kv.second;
        if (m != q::ConditionReader::Member::Val) {
            const bool text = py::isinstance<py::str>(v);
            reader.text(m, kind_of(v), text ? v.cast<std::string>() : std::string(), q::QueryError::npos,
                        type_name_of(v));
            continue;
        }
        bool overflow = false;
        if (!is_sequence(v)) {
            if (auto s = to_scalar(v, overflow)) reader.scalar(std::move(*s));
            else if (overflow) reader.out_of_range();
            else reader.bad_val(kind_of(v), q::QueryError::npos, type_name_of(v));
            continue;
        }
        reader.begin_array();
        for (auto el : v) {
            if (is_sequence(el) || py::isinstance<py::dict>(el)) reader.bad_element(kind_of(el));
            else if (auto s = to_scalar(el, overflow)) reader.element(std::move(*s));
            else if (overflow) reader.out_of_range();
            else reader.bad_element(q::Kind::Other, q::QueryError::npos, type_name_of(el));
        }
    }
    return reader.finish();
}

// Conditions from Python: JSON text, or a list/tuple of dicts; JSON text inside the list
// adds its conditions in place (a search's `where=` text joins its other conditions).
std::vector<q::Condition> to_conditions(const py::handle& items) {
    if (py::isinstance<py::str>(items)) return q::parse(items.cast<std::string>());
    if (!py::isinstance<py::list>(items) && !py::isinstance<py::tuple>(items))
        throw q::QueryError("conditions must be a list of dicts or JSON text, got " + type_name_of(items));
    py::sequence seq = py::reinterpret_borrow<py::sequence>(items);
    std::vector<q::Condition> out;
    out.reserve(seq.size());
    for (auto item : seq) {
        if (py::isinstance<py::str>(item)) {
            for (auto& c : q::parse(item.cast<std::string>())) out.push_back(std::move(c));
        } else {
            out.push_back(to_condition(item, out.size()));
        }
        q::check_count(out.size());
    }
    return out;
}

py::object from_scalar(const q::Scalar& v) {
    if (std::holds_alternative<std::monostate>(v)) return py::none();
    if (auto b = std::get_if<bool>(&v)) return py::bool_(*b);
    if (auto i = std::get_if<std::int64_t>(&v)) return py::int_(*i);
    if (auto d = std::get_if<double>(&v)) return py::float_(*d);
    return py::str(std::get<std::string>(v));
}

py::list from_conditions(const std::vector<q::Condition>& cs) {
    py::list out;
    for (const auto& c : cs) {
        py::dict d;
        d["field"] = c.field;
        d["op"] = std::string(q::op_name(c.op));
        if (q::op_takes_no_value(c.op)) {
            d["val"] = py::none();
        } else if (q::op_takes_array(c.op)) {
            py::list vals;
            for (const auto& v : c.values) vals.append(from_scalar(v));
            d["val"] = vals;
        } else {
            d["val"] = from_scalar(c.values.front());
        }
        out.append(d);
    }
    return out;
}

const sc::Endpoint& endpoint_of(const std::string& path) {
    const sc::Endpoint* e = sc::find_endpoint(path);
    if (!e) throw q::QueryError("unknown endpoint \"" + path + "\"");
    return *e;
}

const char* verify_name(jwt::VerifyResult r) {
    switch (r) {
        case jwt::VerifyResult::Ok: return "ok";
        case jwt::VerifyResult::Malformed: return "malformed";
        case jwt::VerifyResult::BadAlgorithm: return "bad_algorithm";
        case jwt::VerifyResult::BadSignature: return "bad_signature";
        case jwt::VerifyResult::Expired: return "expired";
    }
    return "malformed";
}

}  // namespace

void bind_query(py::module_& m) {
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const q::QueryError& e) {
            set_query_error(e);
        }
    });

    py::module_ qm = m.def_submodule("query", "Conditions of the `json` parameter (C++ core)");
    qm.attr("MAX_JSON_LENGTH") = q::kMaxJsonLength;
    qm.attr("MAX_CONDITIONS") = q::kMaxConditions;
    qm.attr("MAX_ARRAY_VALUES") = q::kMaxArrayValues;
    {
        py::tuple ops(12);
        for (int i = 0; i < 12; ++i) ops[i] = std::string(q::op_name(static_cast<q::Op>(i)));
        qm.attr("OPERATORS") = ops;
    }
    qm.def("parse", [](const std::string& text) { return from_conditions(q::parse(text)); }, py::arg("text"),
           "Parse `json` parameter text into a list of dicts {field, op, val} (val None for is null/not null).");
    qm.def("encode",
           [](const py::object& conditions, const std::optional<std::string>& endpoint) {
               const std::vector<q::Condition> cs = to_conditions(conditions);
               return endpoint ? q::encode(cs, endpoint_of(*endpoint)) : q::encode(cs);
           },
           py::arg("conditions"), py::arg("endpoint") = py::none(),
           "Encode conditions (JSON text, or a list of dicts and JSON texts) to the exact `json` parameter text; "
           "with an endpoint path, checked against its json fields and values converted to their types first.");
    qm.def("service_time",
           [](const py::object& value) -> py::object {
               if (auto text = service_time_text(value)) return py::str(*text);
               return value;
           },
           py::arg("value"), "datetime/date -> the service's timestamp/date text (US Eastern); other values unchanged.");
    qm.def("validate",
           [](const py::object& conditions, const std::string& endpoint) {
               q::validate(to_conditions(conditions), endpoint_of(endpoint));
           },
           py::arg("conditions"), py::arg("endpoint"), "Check conditions against an endpoint path's json fields.");
    qm.def("normalize",
           [](const py::object& conditions, const std::string& endpoint) {
               return from_conditions(q::normalize(to_conditions(conditions), endpoint_of(endpoint)));
           },
           py::arg("conditions"), py::arg("endpoint"),
           "validate() and return the conditions with values converted to their field's type.");
    qm.def("to_sql",
           [](const py::object& conditions, const std::string& endpoint) {
               q::SqlFragment f = q::to_sql(to_conditions(conditions), endpoint_of(endpoint));
               py::list params;
               for (const auto& v : f.params) params.append(from_scalar(v));
               return py::make_tuple(f.sql, params);
           },
           py::arg("conditions"), py::arg("endpoint"), "(sql, params): the WHERE fragment the emulator runs.");

    py::module_ jm = m.def_submodule("jwt", "HS256 JSON Web Tokens (C++ core)");
    jm.def("base64url_encode", [](const py::bytes& b) { return jwt::base64url_encode(std::string(b)); });
    jm.def("base64url_decode", [](const std::string& s) -> py::object {
        auto r = jwt::base64url_decode(s);
        return r ? py::object(py::bytes(*r)) : py::object(py::none());
    });
    jm.def("hmac_sha256", [](const py::bytes& key, const py::bytes& data) {
        return py::bytes(jwt::hmac_sha256(std::string(key), std::string(data)));
    });
    jm.def("sign_hs256", [](const std::string& payload_json, const std::string& secret) {
        return jwt::sign_hs256(payload_json, secret);
    }, py::arg("payload_json"), py::arg("secret"));
    jm.def("verify_hs256",
           [](const std::string& token, const std::string& secret, std::int64_t now) {
               std::string payload;
               auto r = jwt::verify_hs256(token, secret, now, &payload);
               return py::make_tuple(verify_name(r),
                                     r == jwt::VerifyResult::Ok ? py::object(py::str(payload)) : py::object(py::none()));
           },
           py::arg("token"), py::arg("secret"), py::arg("now"),
           "(result, payload_json or None); result is ok, malformed, bad_algorithm, bad_signature or expired.");
    jm.def("payload_unverified", [](const std::string& token) { return jwt::payload_unverified(token); });
    jm.def("expiry_unverified", [](const std::string& token) { return jwt::expiry_unverified(token); });
}

}  // namespace vehicledata::bindings
