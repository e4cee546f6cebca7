// Exposes the schema table (read-only) as plain Python data: dicts and lists.
// Python code (vehicledata.schema) wraps it in small dataclasses.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "vehicledata/schema.h"

namespace py = pybind11;
namespace sc = vehicledata::schema;

namespace vehicledata::bindings {
namespace {

py::dict field_dict(const sc::Field& f) {
    py::dict d;
    d["name"] = f.name;
    d["type"] = std::string(sc::type_name(f.type));
    d["nullable"] = f.nullable;
    d["max_length"] = f.max_length;
    d["enum"] = f.enum_values;
    d["column"] = std::string(f.sql());
    d["scale"] = f.scale;
    d["in_record"] = f.in_record;
    d["verbose_only"] = f.verbose_only;
    d["nested"] = f.nested;
    d["nested_array"] = f.nested_array;
    d["nested_key"] = f.nested_key;
    d["sqlite_type"] = std::string(sc::sqlite_type(f.type));
    return d;
}

py::dict record_dict(const sc::Record& r) {
    py::dict d;
    d["name"] = r.name;
    d["table"] = r.table;
    d["primary"] = r.primary;
    py::list fields;
    for (const auto& f : r.fields) fields.append(field_dict(f));
    d["fields"] = fields;
    return d;
}

const char* shape_name(sc::Shape s) {
    switch (s) {
        case sc::Shape::Envelope: return "envelope";
        case sc::Shape::Array: return "array";
        case sc::Shape::Object: return "object";
    }
    return "?";
}

py::dict endpoint_dict(const sc::Endpoint& e) {
    py::dict d;
    d["path"] = e.path;
    d["resource"] = e.resource;
    d["kind"] = std::string(sc::kind_name(e.kind));
    d["method"] = e.method;
    d["category"] = e.category;
    d["record"] = e.record;
    d["table"] = e.table;
    d["shape"] = shape_name(e.shape);
    d["deprecated"] = e.deprecated;
    d["deprecates"] = e.deprecates;
    d["replaced_by"] = e.replaced_by;
    d["quirk"] = std::string(sc::quirk_name(e.quirk));
    d["text_errors"] = e.text_errors;
    d["parameter"] = std::string(sc::path_parameter(e));
    d["paged"] = e.paged;
    d["verbose"] = e.verbose;
    py::list filters;
    for (const auto& f : e.filters) {
        py::dict fd;
        fd["name"] = f.name;
        fd["match"] = f.match == sc::Match::Value ? "value" : "like";
        fd["column"] = f.column.empty() ? f.name : f.column;
        fd["predicate"] = f.predicate;
        fd["one_of"] = f.one_of;
        filters.append(fd);
    }
    d["filters"] = filters;
    py::list jf;
    for (const auto& j : e.json_fields) {
        py::dict jd;
        jd["name"] = j.name;
        jd["type"] = std::string(sc::type_name(j.type));
        jd["enum"] = j.enum_values;
        jd["related"] = j.related_table;
        jd["related_key"] = j.related_key;
        jd["column"] = j.column;
        jf.append(jd);
    }
    d["json_fields"] = jf;
    py::list sk;
    py::dict sort_columns;
    for (const auto& s : e.sort_keys) {
        sk.append(s.name);
        sort_columns[py::str(s.name)] = s.column;
    }
    d["sort_keys"] = sk;
    d["sort_columns"] = sort_columns;
    d["default_sort"] = e.default_sort;
    d["demo_predicate"] = e.demo_predicate;
    return d;
}

}  // namespace

void bind_schema(py::module_& m) {
    py::module_ s = m.def_submodule("schema", "The schema table as plain data");
    s.def("records", [] {
        py::list out;
        for (const auto& r : sc::records()) out.append(record_dict(r));
        return out;
    }, "Every record type: name, storage table and ordered fields.");
    s.def("endpoints", [] {
        py::list out;
        for (const auto& e : sc::endpoints()) out.append(endpoint_dict(e));
        return out;
    }, "Every endpoint: path, record, filters, json fields and sort keys.");
    s.def("attributes", [] {
        py::list out;
        for (const auto& a : sc::attributes()) out.append(a.name);
        return out;
    }, "Attribute names accepted by the vehicle attributes endpoint.");
    s.def("legacy_trim_aliases", [] {
        py::list out;
        for (const auto& a : sc::legacy_trim_aliases())
            out.append(py::make_tuple(std::string(a.old_key), std::string(a.member), a.first));
        return out;
    }, "The legacy trim's older keys (quirk legacy_trim_verbose): (old key, documented member, first element).");
    s.attr("DEFAULT_LIMIT") = sc::kDefaultLimit;
    s.attr("MAX_LIMIT") = sc::kMaxLimit;
    s.attr("DEMO_FIRST_YEAR") = sc::kDemoFirstYear;
    s.attr("DEMO_LAST_YEAR") = sc::kDemoLastYear;
}

}  // namespace vehicledata::bindings
