// The search SQL (as moto's models): the WHERE clause of filters, json conditions and the demo
// restriction, the ORDER BY of sort and direction, and the sorted result ids.
#include "search_sql.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <unordered_map>

namespace vehicledata::emulator {

using schema::Type;

namespace {

bool parse_int(std::string_view s, std::int64_t& v) {
    if (!s.empty() && s.front() == '+') s.remove_prefix(1);
    auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool parse_number(const std::string& s, double& v) {
    if (s.empty() || std::isspace(static_cast<unsigned char>(s.front()))) return false;
    char* end = nullptr;
    v = std::strtod(s.c_str(), &end);
    return end == s.c_str() + s.size() && std::isfinite(v);
}


// A Like filter's value with a NUL byte (%00) is refused: SQLite reads a LIKE pattern as a C
// string, so "SUV\0zzz" would match as "SUV"; a 400 naming the byte rather than a silently
// shorter pattern. The message quotes the value whole (the error body escapes the NUL as \u0000).
// (Value filters keep a NUL as an ordinary byte: SQLite compares bound text by its length.)
void refuse_nul_in_pattern(const std::string& name, const std::string& value) {
    const std::size_t at = value.find('\0');
    if (at == std::string::npos) return;
    throw bad_request("Invalid value for " + name + ": a NUL byte (%00) at position " + std::to_string(at + 1) +
                      " is not allowed in a LIKE pattern, got '" + value + "'");
}

// The field a filter compares with (for its type), or nullptr.
const schema::Field* filter_field(const schema::Endpoint& e, const schema::Filter& f) {
    if (!f.related_table.empty()) {
        const auto* r = schema::table_record(f.related_table);
        return r ? r->field(f.column) : nullptr;
    }
    if (f.predicate) {
        for (const auto& r : schema::records())
            if (r.primary)
                if (const auto* x = r.field(f.name)) return x;
        return nullptr;
    }
    const std::string_view col = f.column.empty() ? std::string_view(f.name) : std::string_view(f.column);
    if (const auto* p = schema::table_record(e.table))
        if (const auto* x = p->field(col)) return x;
    return nullptr;
}



// "col COLLATE NOCASE" for the text columns of the endpoint's table (the live
// service's MySQL collation is case-insensitive), else "col".
std::string order_term(const schema::Endpoint& e, std::string_view column) {
    std::string out(column);
    const schema::Record* r = e.table.empty() ? nullptr : schema::table_record(e.table);
    const schema::Field* f = r ? r->field(column) : nullptr;
    if (f && f->type == Type::String) out.append(" COLLATE NOCASE");
    return out;
}

// The ORDER BY clause of an endpoint's default order, built once.
struct DefaultOrder {
    std::string plain;
    std::string tail;  // the default order as a tie-breaker after a sort key (", ..."), or ""
};

DefaultOrder make_default_order(const schema::Endpoint& e) {
    DefaultOrder d;
    if (e.default_sort.empty()) return d;
    std::vector<std::pair<std::string, std::string>> keys;  // column, ASC|DESC
    std::string_view rest = e.default_sort;
    while (!rest.empty()) {
        const auto comma = rest.find(',');
        std::string_view item = rest.substr(0, comma);
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
        while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
        const auto sp = item.find(' ');
        keys.emplace_back(std::string(item.substr(0, sp)),
                          sp == std::string_view::npos ? std::string("ASC") : std::string(item.substr(sp + 1)));
    }
    std::string keys_sql;
    for (std::size_t i = 0; i < keys.size(); ++i) {
        keys_sql.append(i ? ", " : "");
        keys_sql.append(order_term(e, keys[i].first)).push_back(' ');
        keys_sql.append(keys[i].second);
    }
    d.tail = ", " + keys_sql;
    d.plain = " ORDER BY " + keys_sql;
    return d;
}

const DefaultOrder& default_order(const schema::Endpoint& e) {
    static const std::unordered_map<const schema::Endpoint*, DefaultOrder> orders = [] {
        std::unordered_map<const schema::Endpoint*, DefaultOrder> m;
        for (const auto& x : schema::endpoints()) m.emplace(&x, make_default_order(x));
        return m;
    }();
    return orders.at(&e);
}

std::string count_key(const std::string& sql, const std::vector<query::Scalar>& params) {
    std::string k = sql;
    for (const auto& p : params) {
        k.push_back('\x1f');
        std::visit(
            [&](const auto& x) {
                using T = std::decay_t<decltype(x)>;
                if constexpr (std::is_same_v<T, std::monostate>) k.append("n");
                else if constexpr (std::is_same_v<T, bool>) k.append(x ? "b1" : "b0");
                else if constexpr (std::is_same_v<T, std::int64_t>) { k.push_back('i'); format::append_int(k, x); }
                else if constexpr (std::is_same_v<T, double>) { k.push_back('d'); format::append_double(k, x); }
                else { k.push_back('s'); k.append(x); }
            },
            p);
    }
    return k;
}

}  // namespace

// Filters, json conditions and the demo restriction of a search.
Sql build_where(const Call& call, const schema::Endpoint& e) {
    Sql q;
    const bool demo = !full_access(call);
    for (const auto& f : e.filters) {
        const auto* p = param(call, f.name);
        if (!f.one_of.empty()) {  // required, selects the catalogue, no condition
            std::string allowed;
            for (const auto& v : f.one_of) allowed += (allowed.empty() ? "" : ", ") + v;
            if (!p) throw bad_request("The " + f.name + " parameter is required: one of " + allowed);
            if (std::find(f.one_of.begin(), f.one_of.end(), p->value) == f.one_of.end())
                throw bad_request("Invalid " + f.name + " '" + p->value + "': expected one of " + allowed);
            continue;
        }
        if (!p) continue;
        if (f.match == schema::Match::Like) refuse_nul_in_pattern(f.name, p->value);
        const schema::Field* field = filter_field(e, f);
        std::string clause;
        if (!f.related_table.empty()) {
            clause = schema::related_predicate(f.related_table, f.related_key,
                                               f.column + (f.match == schema::Match::Like ? " LIKE ?" : " = ?"), demo);
        } else if (f.predicate) {
            clause = f.column;
        } else {
            clause.append(f.column.empty() ? f.name : f.column);
            // Value filters on text match case-insensitively, as the service's MySQL collation does.
            const bool text = field && field->type == Type::String;
            clause.append(f.match == schema::Match::Like ? " LIKE ?" : (text ? " COLLATE NOCASE = ?" : " = ?"));
        }
        if (f.match == schema::Match::Value && field && (field->type == Type::Int || field->type == Type::Int64)) {
            std::int64_t v;
            if (!parse_int(p->value, v))
                throw bad_request("Invalid value for " + f.name + ": expected an integer, got '" + p->value + "'");
            q.params.emplace_back(v);
        } else if (f.match == schema::Match::Value && field &&
                   (field->type == Type::Decimal || field->type == Type::Float)) {
            double v;
            if (!parse_number(p->value, v))
                throw bad_request("Invalid value for " + f.name + ": expected a number, got '" + p->value + "'");
            q.params.emplace_back(v);
        } else {
            q.params.emplace_back(p->value);
        }
        q.add(clause);
    }
    if (const auto* j = param(call, "json")) {
        if (!e.accepts_json()) throw bad_request("The json parameter is not accepted by " + e.path);
        std::vector<query::Condition> conditions;
        try {
            conditions = query::parse(j->value);
            query::validate(conditions, e);
        } catch (const query::QueryError& err) {
            throw bad_request(std::string("Invalid json parameter: ") + err.what());
        }
        auto frag = query::to_sql(conditions, e, demo);
        if (!frag.sql.empty()) {
            q.add(frag.sql);
            for (auto& v : frag.params) q.params.push_back(std::move(v));
        }
    }
    if (demo && !e.demo_predicate.empty()) q.add(e.demo_predicate);
    return q;
}

// `sort` and `direction`: the sort key (text columns case-insensitively) then the
// default order as the tie-breaker. Never an error (CakePHP's paginator). Without a
// usable sort key (none, or one the endpoint does not list) `direction` is ignored
// and the default order kept, as the paginator does: it only applies `direction` to
// a whitelisted `sort` (validateSort drops both otherwise).
std::string order_by(const Call& call, const schema::Endpoint& e) {
    const DefaultOrder& def = default_order(e);
    const auto* s = param(call, "sort");
    // A sort key the endpoint does not list is ignored (CakePHP's sort whitelist).
    const schema::SortKey* key = s ? e.sort_key(s->value) : nullptr;
    if (!key) return def.plain;
    const auto* d = param(call, "direction");
    bool desc = false;
    if (d) {
        std::string v = d->value;
        for (auto& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        desc = v == "desc";  // anything but asc/desc is asc, as CakePHP's paginator
    }
    return " ORDER BY " + order_term(e, key->column) + (desc ? " DESC" : " ASC") + def.tail;
}

// The sorted rowids of a search (cached until the data change: see Store::data_generation).
std::shared_ptr<const Store::Ids> result_ids(Store& store, const std::string& from_where_order,
                                             const std::vector<query::Scalar>& params) {
    std::string key = count_key(from_where_order, params);
    if (auto ids = store.cached_ids(key)) return ids;
    const std::uint64_t generation = store.data_generation();
    auto ids = std::make_shared<Store::Ids>();
    Statement st = store.statement("SELECT rowid" + from_where_order);
    st.bind(params);
    while (st.step()) ids->push_back(sqlite3_column_int64(st.get(), 0));
    store.remember_ids(key, ids, generation);
    return ids;
}

}  // namespace vehicledata::emulator
