// Route matching and the search endpoints (envelope, years, vehicle attributes).
#include <charconv>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdlib>
#include <unordered_map>

#include "routes.h"

#include "account.h"
#include "detail.h"
#include "feed.h"
#include "synthetic.h"
#include "vin.h"
#include "vehicledata/envelope.h"
#include "vehicledata/query.h"

namespace vehicledata::emulator {

using schema::Type;

// ---- routing ----------------------------------------------------------------------
namespace {

std::unordered_map<std::string, Route> build_exact_routes() {
    std::unordered_map<std::string, Route> m;
    auto add = [&](const std::string& path, RouteKind kind, const char* method = "GET", bool text = false) {
        Route r;
        r.kind = kind;
        r.endpoint = schema::find_endpoint(path);
        r.method = method;
        r.text_errors = text;
        m[path] = r;
    };
    for (const auto& e : schema::endpoints()) {
        if (e.path.find('{') != std::string::npos) continue;
        if (e.shape == schema::Shape::Envelope) add(e.path, RouteKind::Search);
    }
    add("/api/years/v2", RouteKind::Years);
    add("/api/years", RouteKind::Years);
    add("/api/vehicle-attributes", RouteKind::Attributes);
    add("/api/license-plate", RouteKind::LicensePlate);
    add("/api/auth/login", RouteKind::Login, "POST", true);
    add("/api/account/requests", RouteKind::AccountRequests);
    add("/api/account/requests-today", RouteKind::AccountToday);
    add("/api/data-feeds/download", RouteKind::FeedDownload, "GET", true);
    add("/api/data-feeds/last-updated", RouteKind::FeedLastUpdated);
    return m;
}

}  // namespace

std::optional<Route> match_route(std::string_view path) {
    static const std::unordered_map<std::string, Route> exact = build_exact_routes();
    if (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
    if (auto it = exact.find(std::string(path)); it != exact.end()) return it->second;
    struct Param { std::string_view prefix; RouteKind kind; const char* endpoint; };
    static const Param params[] = {
        {"/api/trims/v2/", RouteKind::TrimDetail, "/api/trims/v2/{id}"},
        {"/api/trims/", RouteKind::TrimLegacyDetail, "/api/trims/{id}"},
        {"/api/obd-codes/", RouteKind::ObdDetail, "/api/obd-codes/{code}"},
        {"/api/vin/", RouteKind::Vin, "/api/vin/{vin}"},
    };
    for (const auto& p : params) {
        if (path.size() <= p.prefix.size() || path.substr(0, p.prefix.size()) != p.prefix) continue;
        std::string_view arg = path.substr(p.prefix.size());
        if (arg.find('/') != std::string_view::npos) return std::nullopt;
        Route r;
        r.kind = p.kind;
        r.endpoint = schema::find_endpoint(p.endpoint);
        r.arg = std::string(arg);
        return r;
    }
    return std::nullopt;
}

std::vector<format::QueryParam> dedupe_params(std::vector<format::QueryParam> params) {
    std::vector<format::QueryParam> out;
    out.reserve(params.size());
    for (auto& p : params) {
        bool found = false;
        for (auto& o : out)
            if (o.name == p.name) {
                o.value = std::move(p.value);
                found = true;
                break;
            }
        if (!found) out.push_back(std::move(p));
    }
    return out;
}

// ---- helpers ------------------------------------------------------------------------
namespace {

const format::QueryParam* param(const Call& call, std::string_view name) {
    for (const auto& p : call.params)
        if (p.name == name) return p.value.empty() ? nullptr : &p;
    return nullptr;
}

HttpError bad_request(const std::string& message) { return HttpError(400, envelope::kBadRequest, message); }

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

bool full_access(const Call& call) { return call.identity.valid && call.identity.subscribed; }

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

struct Sql {
    std::string where;
    std::vector<query::Scalar> params;
    void add(std::string_view clause) {
        where.append(where.empty() ? " WHERE (" : " AND (");
        where.append(clause);
        where.push_back(')');
    }
};

// Filters, json conditions and the demo restriction of a search.
Sql build_where(const Call& call, const schema::Endpoint& e) {
    Sql q;
    const bool demo = !full_access(call);
    for (const auto& f : e.filters) {
        const auto* p = param(call, f.name);
        if (!p) continue;
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

// "col COLLATE NOCASE" for the text columns of the endpoint's table (the live
// service's MySQL collation is case-insensitive), else "col".
std::string order_term(const schema::Endpoint& e, std::string_view column) {
    std::string out(column);
    const schema::Record* r = e.table.empty() ? nullptr : schema::table_record(e.table);
    const schema::Field* f = r ? r->field(column) : nullptr;
    if (f && f->type == Type::String) out.append(" COLLATE NOCASE");
    return out;
}

// The ORDER BY clauses of an endpoint's default order, built once: as declared,
// and with its leading key ascending / descending (for `direction` without `sort`).
struct DefaultOrder {
    std::string plain, asc, desc;
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
    auto render = [&](const char* lead) {
        std::string out;
        for (std::size_t i = 0; i < keys.size(); ++i) {
            out.append(i ? ", " : "");
            out.append(order_term(e, keys[i].first)).push_back(' ');
            out.append(i == 0 && lead ? lead : keys[i].second);
        }
        return out;
    };
    d.tail = ", " + render(nullptr);
    d.plain = " ORDER BY " + render(nullptr);
    d.asc = " ORDER BY " + render("ASC");
    d.desc = " ORDER BY " + render("DESC");
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

// `sort` and `direction`: the sort key (text columns case-insensitively) then the
// default order as the tie-breaker; `direction` alone (or with an unknown sort)
// applies to the default order's leading key. Never an error (CakePHP's paginator).
std::string order_by(const Call& call, const schema::Endpoint& e) {
    const auto* s = param(call, "sort");
    const auto* d = param(call, "direction");
    const DefaultOrder& def = default_order(e);
    if (!s && !d) return def.plain;
    bool desc = false;
    if (d) {
        std::string v = d->value;
        for (auto& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        desc = v == "desc";  // anything but asc/desc is asc, as CakePHP's paginator
    }
    // A sort key the endpoint does not list is ignored (CakePHP's sort whitelist).
    const schema::SortKey* key = s ? e.sort_key(s->value) : nullptr;
    if (!key) return d ? (desc ? def.desc : def.asc) : def.plain;
    return " ORDER BY " + order_term(e, key->column) + (desc ? " DESC" : " ASC") + def.tail;
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

// The collection's link to another page of this search.
std::string page_link(const Call& call, std::int64_t page, std::int64_t limit) {
    std::string_view target = call.target;
    std::string link(target.substr(0, target.find('?')));
    link.push_back('?');
    for (const auto& p : call.params) {
        if (p.name == "page" || p.name == "limit") continue;
        format::append_form_encoded(link, p.name);
        link.push_back('=');
        format::append_form_encoded(link, p.value);
        link.push_back('&');
    }
    link.append("page=");
    format::append_int(link, page);
    link.append("&limit=");
    format::append_int(link, limit);
    return link;
}

// PHP's (int) cast of a query string value: leading whitespace, then the longest
// numeric prefix ("2x" -> 2, "1.9" -> 1, "1e3" -> 1000, "abc" -> 0), saturating.
std::int64_t php_int(const std::string& s) {
    std::size_t i = 0;
    while (i < s.size() && std::strchr(" \t\n\r\v\f", s[i]) && s[i]) ++i;
    const char* start = s.c_str() + i;
    char* end = nullptr;
    const double d = std::strtod(start, &end);  // the numeric prefix, as a number
    if (end == start || std::isnan(d)) return 0;
    if (std::isinf(d) || std::string_view(start, static_cast<std::size_t>(end - start)).find_first_of("xXnN") !=
                             std::string_view::npos) {
        // strtod also reads hex, inf and nan, which PHP does not: keep the decimal digits only.
        std::int64_t v = 0;
        const char* p = start + (*start == '+' || *start == '-');
        bool neg = *start == '-';
        while (*p >= '0' && *p <= '9' && v < 1000000000000000000) v = v * 10 + (*p++ - '0');
        return neg ? -v : v;
    }
    if (d >= 9.2e18) return INT64_MAX;
    if (d <= -9.2e18) return INT64_MIN;
    return static_cast<std::int64_t>(d);
}

// `page` and `limit` as CakePHP's numeric paginator takes them: integer-cast, below 1 -> 1,
// above the maximum -> the maximum. Never an error.
std::int64_t paging_value(const Call& call, const char* name, std::int64_t fallback, std::int64_t max) {
    const auto* p = param(call, name);
    if (!p) return fallback;
    return std::clamp<std::int64_t>(php_int(p->value), 1, max);
}

bool verbose_of(const Call& call, const schema::Endpoint& e) {
    if (!e.verbose) return false;
    const auto* v = param(call, "verbose");
    if (!v) return false;
    if (v->value == "yes") return true;
    if (v->value == "no") return false;
    throw bad_request("Invalid verbose '" + v->value + "': expected yes or no");
}

}  // namespace

// A 200 JSON response (compression and charset are settled in compress_response).
void set_json(httplib::Response& res, std::string&& body) {
    res.status = 200;
    res.body = std::move(body);
    res.set_header("Content-Type", "application/json");
}

// ---- Api -------------------------------------------------------------------------------
Api::Api(Store& store, Auth& auth, UsageCounters& usage, const Clock& clock)
    : store_(store), auth_(auth), usage_(usage), clock_(clock), feed_(store) {
    int id = 0;
    for (const auto& r : schema::records())
        for (bool verbose : {false, true}) {
            auto plan = std::make_unique<Plan>(make_plan(r, verbose));
            plan->id = ++id;
            plans_[{&r, verbose}] = std::move(plan);
        }
    vin_decoder_ = std::make_unique<VinDecoderSlot>(store_);
    synthetic_ = synthetic_fields(store_);
}

const Plan& Api::plan_of(const schema::Record& record, bool verbose) { return *plans_.at({&record, verbose}); }

void Api::handle(const Call& call, httplib::Response& res) {
    dispatch(call, res);
    set_synthetic_header(synthetic_, call, res);
}

void Api::dispatch(const Call& call, httplib::Response& res) {
    switch (call.route->kind) {
        case RouteKind::Search: return search(call, res);
        case RouteKind::Years: return years(call, res);
        case RouteKind::Attributes: return attributes(call, res);
        case RouteKind::TrimDetail: return trim_detail(*this, call, res, false);
        case RouteKind::TrimLegacyDetail: return trim_detail(*this, call, res, true);
        case RouteKind::ObdDetail: return obd_detail(*this, call, res);
        case RouteKind::LicensePlate: return license_plate(*this, call, res);
        case RouteKind::Login: return login(*this, call, res);
        case RouteKind::AccountRequests: return account(*this, call, res, false);
        case RouteKind::AccountToday: return account(*this, call, res, true);
        case RouteKind::FeedLastUpdated: return feed_last_updated(*this, call, res);
        case RouteKind::FeedDownload: return feed_download(*this, call, res);
        case RouteKind::Vin: return vin_decode(*this, call, res);
    }
}

void Api::search(const Call& call, httplib::Response& res) {
    const schema::Endpoint& e = *call.route->endpoint;
    const schema::Record* record = schema::find_record(e.record);
    const bool verbose = verbose_of(call, e);
    const Plan& plan = plan_of(*record, verbose);
    const std::int64_t page = paging_value(call, "page", 1, INT64_MAX / schema::kMaxLimit);
    const std::int64_t limit = paging_value(call, "limit", schema::kDefaultLimit, schema::kMaxLimit);
    Sql q = build_where(call, e);
    const std::string order = order_by(call, e);

    const auto ids = result_ids(store_, " FROM " + e.table + q.where + order, q.params);
    const std::int64_t total = static_cast<std::int64_t>(ids->size());
    const std::int64_t pages = total == 0 ? 1 : (total + limit - 1) / limit;
    if (page > pages)  // CakePHP's out-of-bounds page
        throw HttpError(404, envelope::kNotFound, "Page " + std::to_string(page) + " is past the last page (" +
                                                      std::to_string(pages) + ") of this search");
    const std::int64_t offset = (page - 1) * limit;
    const std::int64_t count = offset >= total ? 0 : std::min(limit, total - offset);

    std::string out;
    out.reserve(static_cast<std::size_t>(512 + count * (record->name == "trim_legacy" ? 2000 : 480)));
    envelope::Collection c;
    c.url = call.target;
    c.count = count;
    c.pages = pages;
    c.total = total;
    if (page < pages) c.next = page_link(call, page + 1, limit);
    if (page > 1) c.prev = page_link(call, std::min(page - 1, pages), limit);  // past the last: the last page
    c.first = page == 1 ? call.target : page_link(call, 1, limit);
    if (pages > 1) c.last = page_link(call, pages, limit);
    envelope::begin_collection(out, c);
    if (count > 0) {
        const bool demo = !full_access(call);
        const std::uint64_t generation = store_.data_generation();
        Statement st = store_.statement("SELECT " + plan.select_list + " FROM " + e.table + " WHERE rowid = ?");
        bool first = true;
        NestedWriter nested = [&](std::string& o, const PlanItem& it) { write_nested(*this, o, it, st.get(), plan, demo); };
        for (std::int64_t i = offset; i < offset + count; ++i) {
            const std::int64_t rowid = (*ids)[static_cast<std::size_t>(i)];
            const std::size_t mark = out.size();
            if (!first) out.push_back(',');
            if (rows_.append(out, plan.id, rowid, generation)) {
                first = false;
                continue;
            }
            sqlite3_reset(st.get());
            sqlite3_bind_int64(st.get(), 1, rowid);
            if (!st.step()) {
                out.resize(mark);
                continue;
            }
            first = false;
            const std::size_t start = out.size();
            write_json_row(out, st.get(), plan, nested);
            rows_.put(plan.id, rowid, std::string_view(out).substr(start), generation);
        }
    }
    envelope::end_collection(out);
    set_json(res, std::move(out));
}

void Api::years(const Call& call, httplib::Response& res) {
    const schema::Endpoint& e = *call.route->endpoint;
    Sql q = build_where(call, e);
    std::string sql = "SELECT DISTINCT year FROM " + e.table + q.where + " ORDER BY " +
                      (e.default_sort.empty() ? std::string("year DESC") : e.default_sort);
    Statement st = store_.statement(sql);
    st.bind(q.params);
    std::string out = "[";
    bool first = true;
    while (st.step()) {
        if (!first) out.push_back(',');
        first = false;
        format::append_int(out, sqlite3_column_int64(st.get(), 0));
    }
    out.push_back(']');
    set_json(res, std::move(out));
}

void Api::attributes(const Call& call, httplib::Response& res) {
    const auto* p = param(call, "attribute");
    std::string allowed;
    for (const auto& a : schema::attributes()) allowed += (allowed.empty() ? "" : ", ") + a.name;
    if (!p) throw bad_request("The attribute parameter is required: one of " + allowed);
    const schema::Attribute* a = schema::find_attribute(p->value);
    if (!a) throw bad_request("Invalid attribute '" + p->value + "': expected one of " + allowed);
    std::string sql = "SELECT DISTINCT " + a->column + " FROM " + a->table + " WHERE " + a->column +
                      " IS NOT NULL ORDER BY " + a->column;
    Statement st = store_.statement(sql);
    std::string out = "[";
    bool first = true;
    while (st.step()) {
        if (!first) out.push_back(',');
        first = false;
        const unsigned char* t = sqlite3_column_text(st.get(), 0);
        format::append_json_string(out, std::string_view(reinterpret_cast<const char*>(t),
                                                         static_cast<std::size_t>(sqlite3_column_bytes(st.get(), 0))));
    }
    out.push_back(']');
    set_json(res, std::move(out));
}

}  // namespace vehicledata::emulator
