// vehicledata._core.query and vehicledata._core.jwt.
//
// Conditions cross the boundary as plain dicts {"field", "op", "val"}; the
// Python layer (vehicledata.query) builds them from F(...) expressions.  A C++
// QueryError is raised in Python as vehicledata.errors.QueryError with
// .field, .op and .position set (None when unknown).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <climits>
#include <string>
#include <vector>

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

[[noreturn]] void fail(std::size_t index, const std::string* field, const std::string* op, const std::string& reason) {
    throw q::QueryError(q::condition_label(index, field, op) + ": " + reason, q::QueryError::npos,
                        field ? *field : std::string(), op ? *op : std::string());
}

std::string type_name_of(const py::handle& h) { return py::str(py::type::of(h).attr("__name__")); }

q::Scalar to_scalar(const py::handle& v, const std::string& what, std::size_t index, const std::string* field,
                    const std::string* op) {
    if (v.is_none()) return q::Scalar{};
    if (py::isinstance<py::bool_>(v)) return q::Scalar(v.cast<bool>());
    {
        // numpy.bool_ is no Python bool and has __float__: keep it a bool, not 1.0.
        const std::string tn = type_name_of(v);
        if (tn == "bool_" || tn == "bool") {
            const int truth = PyObject_IsTrue(v.ptr());
            if (truth < 0) throw py::error_already_set();
            return q::Scalar(truth == 1);
        }
    }
    if (py::isinstance<py::str>(v)) return q::Scalar(v.cast<std::string>());
    if (py::isinstance<py::float_>(v)) return q::Scalar(v.cast<double>());
    if (PyIndex_Check(v.ptr())) {  // int, numpy integers
        py::int_ i = py::reinterpret_steal<py::int_>(PyNumber_Index(v.ptr()));
        if (!i) throw py::error_already_set();
        int overflow = 0;
        long long n = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
        if (overflow) fail(index, field, op, what + " is out of the 64-bit integer range");
        if (n == -1 && PyErr_Occurred()) throw py::error_already_set();
        return q::Scalar(static_cast<std::int64_t>(n));
    }
    if (py::hasattr(v, "__float__") && !py::isinstance<py::bytes>(v)) {  // numpy floats, Decimal
        return q::Scalar(py::float_(py::reinterpret_borrow<py::object>(v)).cast<double>());
    }
    fail(index, field, op, what + " must be a string, number, bool or None, got " + type_name_of(v));
}

std::string dict_string(const py::dict& d, const char* key, std::size_t index, const std::string* field,
                        const std::string* op) {
    py::handle v = d[key];
    if (!py::isinstance<py::str>(v))
        fail(index, field, op, std::string("\"") + key + "\" must be a string, got " + type_name_of(v));
    return v.cast<std::string>();
}

q::Condition to_condition(const py::handle& item, std::size_t index) {
    if (!py::isinstance<py::dict>(item))
        throw q::QueryError(q::condition_label(index, nullptr, nullptr) +
                            " must be a dict {\"field\", \"op\", \"val\"} or a Condition, got " + type_name_of(item));
    py::dict d = py::reinterpret_borrow<py::dict>(item);
    std::string field, op;
    bool has_field = d.contains("field"), has_op = d.contains("op");
    if (has_field) field = dict_string(d, "field", index, nullptr, nullptr);
    const std::string* fp = has_field ? &field : nullptr;
    if (has_op) op = dict_string(d, "op", index, fp, nullptr);
    const std::string* opp = has_op ? &op : nullptr;
    for (auto kv : d) {
        std::string key = py::isinstance<py::str>(kv.first) ? kv.first.cast<std::string>() : std::string(py::repr(kv.first));
        if (key != "field" && key != "op" && key != "val")
            fail(index, fp, opp, "unknown key " + std::string(py::repr(kv.first)) + "; expected field, op, val");
    }
    if (!has_field) fail(index, fp, opp, "missing \"field\"");
    if (field.empty()) fail(index, fp, opp, "\"field\" must not be empty");
    if (!has_op) fail(index, fp, opp, "missing \"op\"");
    q::Condition c;
    c.field = field;
    if (!q::parse_op(op, c.op))
        fail(index, fp, opp, "unknown op; expected one of =, !=, >, <, >=, <=, in, not in, like, not like, not null, is null");
    const bool has_val = d.contains("val");
    py::object val = has_val ? py::reinterpret_borrow<py::object>(d["val"]) : py::object(py::none());
    const bool is_list = py::isinstance<py::list>(val) || py::isinstance<py::tuple>(val);
    if (q::op_takes_no_value(c.op)) {
        if (!val.is_none()) fail(index, fp, opp, "val must be absent or None, got " + type_name_of(val));
        return c;
    }
    if (!has_val) fail(index, fp, opp, "missing \"val\"");
    if (q::op_takes_array(c.op)) {
        if (!is_list) fail(index, fp, opp, "val must be a list of values, got " + type_name_of(val));
        py::sequence seq = py::reinterpret_borrow<py::sequence>(val);
        if (seq.size() == 0) fail(index, fp, opp, "val must not be an empty list");
        if (seq.size() > q::kMaxArrayValues)
            fail(index, fp, opp, "val has more than " + std::to_string(q::kMaxArrayValues) + " values");
        std::size_t k = 0;
        for (auto el : seq) {
            std::string what = "val[" + std::to_string(k++) + "]";
            if (py::isinstance<py::list>(el) || py::isinstance<py::tuple>(el) || py::isinstance<py::dict>(el))
                fail(index, fp, opp, what + " must be a scalar, got " + type_name_of(el));
            c.values.push_back(to_scalar(el, what, index, fp, opp));
        }
        return c;
    }
    if (is_list) fail(index, fp, opp, "val must be a single value, got " + type_name_of(val) + " (use op \"in\" for a list)");
    c.values.push_back(to_scalar(val, "val", index, fp, opp));
    return c;
}

std::vector<q::Condition> to_conditions(const py::handle& items) {
    if (py::isinstance<py::str>(items)) return q::parse(items.cast<std::string>());
    if (!py::isinstance<py::list>(items) && !py::isinstance<py::tuple>(items))
        throw q::QueryError("conditions must be a list of dicts or JSON text, got " + type_name_of(items));
    py::sequence seq = py::reinterpret_borrow<py::sequence>(items);
    if (seq.size() > q::kMaxConditions)
        throw q::QueryError("json has more than " + std::to_string(q::kMaxConditions) + " conditions");
    std::vector<q::Condition> out;
    std::size_t i = 0;
    for (auto item : seq) out.push_back(to_condition(item, i++));
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
    qm.def("encode", [](const py::object& conditions) { return q::encode(to_conditions(conditions)); },
           py::arg("conditions"), "Encode conditions (list of dicts, or JSON text) to the exact `json` parameter text.");
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
