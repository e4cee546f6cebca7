// Detail endpoints (by id: the trim, v2 and legacy; OBD code by code) and nested records.
#include <cctype>
#include <charconv>

#include "detail.h"

#include "api.h"
#include "vehicledata/envelope.h"

namespace vehicledata::emulator {

void write_nested(Api& api, std::string& out, const PlanItem& item, sqlite3_stmt* stmt, const Plan& plan, bool demo) {
    (void)demo;  // nested rows share their trim's model year: the parent row is already restricted
    const schema::Field& f = *item.field;
    const schema::Record* n = schema::find_record(f.nested);
    if (!n) {
        out.append("null");
        return;
    }
    if (f.nested_array) {
        const int id_col = plan.column_of("id");
        if (id_col < 0) {
            out.append("[]");
            return;
        }
        const std::int64_t trim_id = sqlite3_column_int64(stmt, id_col);
        if (n->table.empty()) {
            // A list of {description}: the distinct values of the schema's "table.column" source.
            const auto dot = f.nested_key.find('.');
            const auto fields = n->record_fields();
            if (dot == std::string::npos || fields.size() != 1) {
                out.append("[]");
                return;
            }
            const std::string table = f.nested_key.substr(0, dot), column = f.nested_key.substr(dot + 1);
            Statement st = api.store_.statement("SELECT DISTINCT " + column + " FROM " + table +
                                            " WHERE trim_id = ? AND " + column + " IS NOT NULL ORDER BY " + column);
            st.bind({query::Scalar(trim_id)});
            std::string key;
            format::append_json_string(key, fields[0]->name);
            out.push_back('[');
            bool first = true;
            while (st.step()) {
                if (!first) out.push_back(',');
                first = false;
                out.push_back('{');
                out.append(key);
                out.push_back(':');
                write_json_value(out, st.get(), 0, *fields[0]);
                out.push_back('}');
            }
            out.push_back(']');
            return;
        }
        const Plan& np = api.plan_of(*n, false);
        Statement st = api.store_.statement("SELECT " + np.select_list + " FROM " + n->table + " WHERE " + f.nested_key +
                                        " = ? ORDER BY id");
        st.bind({query::Scalar(trim_id)});
        out.push_back('[');
        bool first = true;
        while (st.step()) {
            if (!first) out.push_back(',');
            first = false;
            write_json_row(out, st.get(), np, [&](std::string& o, const PlanItem& it) {
                write_nested(api, o, it, st.get(), np, demo);
            });
        }
        out.push_back(']');
        return;
    }
    if (f.nested_by_parent_id) {
        // One object: the first row of the element's table that belongs to the parent.
        const int id_col = plan.column_of("id");
        const Plan& np = api.plan_of(*n, false);
        Statement st = api.store_.statement("SELECT " + np.select_list + " FROM " + n->table + " WHERE " + f.nested_key +
                                        " = ? ORDER BY id LIMIT 1");
        if (id_col < 0) {
            out.append("null");
            return;
        }
        st.bind({query::Scalar(static_cast<std::int64_t>(sqlite3_column_int64(stmt, id_col)))});
        if (!st.step()) {
            out.append("null");
            return;
        }
        write_json_row(out, st.get(), np, [&](std::string& o, const PlanItem& it) { write_nested(api, o, it, st.get(), np, demo); });
        return;
    }
    // One object: the row of the nested record's table whose id the parent holds in nested_key.
    const int key_col = plan.column_of(f.nested_key);
    if (key_col < 0 || sqlite3_column_type(stmt, key_col) == SQLITE_NULL) {
        out.append("null");
        return;
    }
    const Plan& np = api.plan_of(*n, false);
    Statement st = api.store_.statement("SELECT " + np.select_list + " FROM " + n->table + " WHERE id = ? LIMIT 1");
    st.bind({query::Scalar(static_cast<std::int64_t>(sqlite3_column_int64(stmt, key_col)))});
    if (!st.step()) {
        out.append("null");
        return;
    }
    write_json_row(out, st.get(), np, [&](std::string& o, const PlanItem& it) { write_nested(api, o, it, st.get(), np, demo); });
}

namespace {

// The record of `e` whose id is `id` (with `demo`, only inside the demo data-set), appended
// to `out`; false (nothing appended) when there is none.
bool write_by_id(Api& api, std::string& out, const schema::Endpoint& e, std::int64_t id, bool demo, bool verbose) {
    const Plan& plan = api.plan_of(*schema::find_record(e.record), verbose);
    std::string sql = "SELECT " + plan.select_list + " FROM " + e.table + " WHERE id = ?";
    if (demo && !e.demo_predicate.empty()) sql += " AND (" + e.demo_predicate + ")";
    Statement st = api.store_.statement(sql);
    st.bind({query::Scalar(id)});
    if (!st.step()) return false;
    write_json_row(out, st.get(), plan, [&](std::string& o, const PlanItem& it) { write_nested(api, o, it, st.get(), plan, demo); });
    return true;
}

}  // namespace

bool write_legacy_trim(Api& api, std::string& out, std::int64_t trim_id, bool demo, bool verbose) {
    static const schema::Endpoint& e = *schema::find_endpoint(schema::Kind::Detail, "trims", /*deprecated=*/true);
    // The rendered object (one SELECT plus a nested query per member: the bulk of a VIN answer)
    // is kept in the rows cache until the data change.  Keys of their own (not the searches'
    // plan/rowid ones): the plan's id in bits above the plans', plus whether the demo predicate
    // held when the row was found (a demo hit proves the trim in the demo data-set).
    const Plan& plan = api.plan_of(*schema::find_record(e.record), verbose);
    const int key = (demo ? 0x8000 : 0x4000) | plan.id;
    const std::uint64_t generation = api.store_.data_generation();
    if (api.rows_.append(out, key, trim_id, generation)) return true;
    const std::size_t start = out.size();
    if (!write_by_id(api, out, e, trim_id, demo, verbose)) return false;
    api.rows_.put(key, trim_id, std::string_view(out).substr(start), generation);
    return true;
}

void detail_by_id(Api& api, const Call& call, httplib::Response& res) {
    const schema::Endpoint& e = *call.route->endpoint;
    std::int64_t id = 0;
    const std::string& arg = call.route->arg;
    auto r = std::from_chars(arg.data(), arg.data() + arg.size(), id);
    if (arg.empty() || r.ec != std::errc() || r.ptr != arg.data() + arg.size() || id < 0)
        throw bad_request("Invalid trim id '" + arg + "': expected a positive integer");
    const bool verbose = e.verbose && yes_no(call, "verbose");
    std::string out;
    out.reserve(16384);
    if (!write_by_id(api, out, e, id, !full_access(call), verbose))
        throw HttpError(404, envelope::kRecordNotFound, "Record not found in table \"" + e.table + "\"");
    set_json(res, std::move(out));
}

void obd_detail(Api& api, const Call& call, httplib::Response& res) {
    const schema::Endpoint& e = *call.route->endpoint;
    std::string code = call.route->arg;
    if (code.empty() || code.size() > 16)
        throw HttpError(400, envelope::kBadRequest, "Invalid OBD code '" + code + "'");
    for (auto& c : code) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    const Plan& plan = api.plan_of(*schema::find_record(e.record), false);
    std::string sql = "SELECT " + plan.select_list + " FROM " + e.table + " WHERE code = ?";
    if (!full_access(call) && !e.demo_predicate.empty()) sql += " AND (" + e.demo_predicate + ")";
    sql += " ORDER BY make IS NOT NULL, make LIMIT 1";
    Statement st = api.store_.statement(sql);
    st.bind({query::Scalar(code)});
    if (!st.step()) throw HttpError(404, envelope::kRecordNotFound, "Record not found in table \"obd_codes\"");
    std::string out;
    write_json_row(out, st.get(), plan);
    set_json(res, std::move(out));
}

void license_plate(Api& api, const Call& call, httplib::Response& res) {
    static const char* kCountries[] = {"US", "CA", "AU", "UK", "FR", "IE", "NZ", "MX", "DE", "CZ", "PT"};
    const auto* cc = param(call, "country_code");
    const auto* lookup = param(call, "lookup");
    const auto* region = param(call, "region");
    if (!cc) throw HttpError(400, envelope::kBadRequest, "The country_code parameter is required");
    bool known = false;
    for (const char* c : kCountries) known = known || cc->value == c;
    if (!known)
        throw HttpError(400, envelope::kBadRequest,
                        "Invalid country_code '" + cc->value + "': expected one of US, CA, AU, UK, FR, IE, NZ, MX, DE, CZ, PT");
    if (!lookup) throw HttpError(400, envelope::kBadRequest, "The lookup parameter is required");
    if (!region && (cc->value == "US" || cc->value == "CA" || cc->value == "AU"))
        throw HttpError(400, envelope::kBadRequest, "The region parameter is required for country_code " + cc->value);
    if (lookup->value.find("#TEST") == std::string::npos)
        throw HttpError(404, envelope::kNotFound, "License plate not found");
    // The service's documented test answer for lookups containing #TEST.
    const schema::Record* r = schema::find_record("license_plate");
    const char* values[] = {"2019", "Toyota", "Camry", "Sedan", "4T1B11HK1KU000000", "2.5L I4", "United States"};
    std::string out = "{";
    std::size_t i = 0;
    for (const auto* f : r->record_fields()) {
        if (i) out.push_back(',');
        format::append_json_string(out, f->name);
        out.push_back(':');
        const char* v = i < 7 ? values[i] : nullptr;
        if (!v) out.append("null");
        else if (f->type == schema::Type::Int) out.append(v);
        else format::append_json_string(out, v);
        ++i;
    }
    out.push_back('}');
    set_json(res, std::move(out));
}

}  // namespace vehicledata::emulator
