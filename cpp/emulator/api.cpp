// The Api (as moto's responses): the service's state, the dispatch of a routed call to its
// handler by the endpoint's kind, and the search handlers (envelope, years, vehicle attributes).
#include "api.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "account.h"
#include "detail.h"
#include "feed.h"
#include "search_sql.h"
#include "synthetic.h"
#include "vin.h"
#include "vehicledata/envelope.h"

namespace vehicledata::emulator {

namespace {

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
    using schema::Kind;
    switch (call.route->kind) {
        case Kind::Search: return search(call, res);
        case Kind::Years: return years(call, res);
        case Kind::Attributes: return attributes(call, res);
        case Kind::Detail:
            if (schema::path_parameter(*call.route->endpoint) == "code") return obd_detail(*this, call, res);
            return detail_by_id(*this, call, res);
        case Kind::Plate: return license_plate(*this, call, res);
        case Kind::Login: return login(*this, call, res);
        case Kind::AccountRequests: return account(*this, call, res, false);
        case Kind::AccountToday: return account(*this, call, res, true);
        case Kind::FeedLastUpdated: return feed_last_updated(*this, call, res);
        case Kind::FeedDownload: return feed_download(*this, call, res);
        case Kind::Vin: return vin_decode(*this, call, res);
    }
}

void Api::search(const Call& call, httplib::Response& res) {
    const schema::Endpoint& e = *call.route->endpoint;
    const schema::Record* record = schema::find_record(e.record);
    const bool verbose = e.verbose && yes_no(call, "verbose");
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
    // Legacy trims (the quirky endpoints) carry their nested members: larger rows.
    const bool large_rows = e.quirk == schema::Quirk::LegacyTrimVerbose;
    out.reserve(static_cast<std::size_t>(512 + count * (large_rows ? 2000 : 480)));
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
