// simdjson On-Demand page decoder: see vehicledata/client/page.h.
#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <cstring>

#include "vehicledata/client/errors.h"
#include "vehicledata/client/page.h"
#include "vehicledata/charconv.h"
#include "vehicledata/format.h"

namespace vehicledata::client {

namespace od = simdjson::ondemand;
using schema::Type;

const Column* Page::column(std::string_view name) const {
    for (const auto& c : columns)
        if (c.name == name) return &c;
    return nullptr;
}

ColumnKind column_kind(Type type) {
    switch (type) {
        case Type::Int: case Type::Int64: return ColumnKind::Int64;
        case Type::Bool: return ColumnKind::Bool;
        case Type::Decimal: case Type::Float: return ColumnKind::Float64;
        case Type::Timestamp: return ColumnKind::Timestamp;
        case Type::Nested: return ColumnKind::Json;
        case Type::String: case Type::Date: return ColumnKind::String;
    }
    return ColumnKind::String;
}

namespace {

// Nested values reach Python's json.loads (recursive): refuse deeper ones here.
constexpr int kMaxNesting = 256;

// The thread's parser keeps its buffers (about 6 bytes per byte of the largest body it has read)
// between pages; above this capacity they are released after the page instead.
constexpr std::size_t kKeepParserCapacity = 4u << 20;

// The decoding thread's parser, released after a page larger than kKeepParserCapacity.
struct ParserLease {
    od::parser& parser;
    ~ParserLease() {
        if (parser.capacity() > kKeepParserCapacity) parser = od::parser{};
    }
};

int nesting_depth(std::string_view raw) {
    int depth = 0, deepest = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < raw.size(); ++i) {
        char ch = raw[i];
        if (in_string) {
            if (ch == '\\') ++i;
            else if (ch == '"') in_string = false;
        } else if (ch == '"') {
            in_string = true;
        } else if (ch == '[' || ch == '{') {
            deepest = std::max(deepest, ++depth);
        } else if (ch == ']' || ch == '}') {
            --depth;
        }
    }
    return deepest;
}

// True when a raw key (simdjson: the bytes after its opening quote) has a backslash before its
// closing quote (the body was validated: a quote ends it).
bool has_escape(od::raw_json_string raw) {
    for (const char* p = reinterpret_cast<const char*>(raw.raw()); *p != '"'; ++p)
        if (*p == '\\') return true;
    return false;
}

bool digits(std::string_view s, std::size_t pos, std::size_t n, int& out) {
    if (pos + n > s.size()) return false;
    int v = 0;
    for (std::size_t i = pos; i < pos + n; ++i) {
        char c = s[i];
        if (c < '0' || c > '9') return false;
        v = v * 10 + (c - '0');
    }
    out = v;
    return true;
}

// Column builder state for one decode.
struct Builder {
    std::vector<Column>& cols;
    const std::string& url;
    const char* base;  // start of the body, for positions
    const char* end;   // one past its last byte
    od::document* doc = nullptr;
    std::size_t row = 0;
    // Quirk LegacyTrimVerbose of the record's endpoints: its older keys (schema.h), else null.
    const std::vector<schema::LegacyAlias>* aliases = nullptr;
    // The key plan: plan[n] is the key (raw text, no escape) the n-th field of an earlier record
    // had and the column it filled (kSkip: none, its value is skipped). The records of a page
    // come with their keys in one order, so one comparison per field finds its column, and a
    // skipped value costs only the parser's walk over it.
    static constexpr int kSkip = -1;
    struct Step {
        std::string key;
        int column = kSkip;
        bool known = false;
    };
    std::vector<Step> plan;

    void learn(std::size_t pos, od::raw_json_string raw, int column) {
        const char* k = reinterpret_cast<const char*>(raw.raw());
        std::size_t len = 0;
        while (k[len] != '"') ++len;
        if (plan.size() <= pos) plan.resize(pos + 1);
        plan[pos].key.assign(k, len);
        plan[pos].column = column;
        plan[pos].known = true;
    }

    void null_at(Column& c) {
        c.valid.push_back(0);
        ++c.null_count;
        switch (c.kind) {
            case ColumnKind::Int64: case ColumnKind::Bool: c.ints.push_back(0); break;
            case ColumnKind::Timestamp: c.ints.push_back(0); c.utc_offset_minutes.push_back(0); break;
            case ColumnKind::Float64: c.floats.push_back(std::numeric_limits<double>::quiet_NaN()); break;
            case ColumnKind::String: case ColumnKind::Json: c.offsets.push_back(static_cast<std::int64_t>(c.bytes.size())); break;
        }
    }

    [[noreturn]] void fail(const std::string& what, const char* at) {
        if (!at && doc) {
            auto loc = doc->current_location();
            at = loc.error() ? end : loc.value_unsafe();
        }
        std::size_t pos = at && at >= base ? static_cast<std::size_t>(at - base) : DecodeError::npos;
        std::string msg = what;
        if (pos != DecodeError::npos) msg += " at byte " + std::to_string(pos);
        throw DecodeError(msg, url, pos);
    }

    void push_string(Column& c, std::string_view s) {
        c.bytes.append(s.data(), s.size());
        c.offsets.push_back(static_cast<std::int64_t>(c.bytes.size()));
        c.valid.push_back(1);
    }

    void reserve(std::size_t rows) {
        for (auto& c : cols) {
            c.valid.reserve(rows);
            switch (c.kind) {
                case ColumnKind::Int64: case ColumnKind::Bool: c.ints.reserve(rows); break;
                case ColumnKind::Timestamp: c.ints.reserve(rows); c.utc_offset_minutes.reserve(rows); break;
                case ColumnKind::Float64: c.floats.reserve(rows); break;
                case ColumnKind::String: case ColumnKind::Json: c.offsets.reserve(rows + 1); c.bytes.reserve(rows * 16); break;
            }
        }
    }

    void value_into(Column& c, od::value v) {
        const char* at = nullptr;  // fail() asks the document where it stopped
        od::json_type t;
        if (v.type().get(t)) fail("malformed JSON value for field '" + c.name + "'", at);
        if (t == od::json_type::null) {
            if (v.is_null().error()) fail("malformed null for field '" + c.name + "'", at);
            null_at(c);
            return;
        }
        switch (c.kind) {
            case ColumnKind::Int64: {
                std::int64_t x = 0;
                if (t == od::json_type::number) {
                    if (v.get_int64().get(x)) {
                        double d;
                        if (v.get_double().get(d)) fail("field '" + c.name + "': not a number", at);
                        // [-2^63, 2^63): anything else has no int64 (the cast would be undefined).
                        if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
                            fail("field '" + c.name + "': integer out of range", at);
                        x = static_cast<std::int64_t>(d);
                    }
                } else if (t == od::json_type::string) {
                    std::string_view s;
                    if (v.get_string().get(s)) fail("field '" + c.name + "': bad string", at);
                    if (s.empty()) { null_at(c); return; }
                    auto r = std::from_chars(s.data(), s.data() + s.size(), x);
                    if (r.ec != std::errc() || r.ptr != s.data() + s.size())
                        fail("field '" + c.name + "': expected an integer, got \"" + std::string(s) + "\"", at);
                } else if (t == od::json_type::boolean) {
                    bool b;
                    if (v.get_bool().get(b)) fail("field '" + c.name + "': bad boolean", at);
                    x = b;
                } else {
                    fail("field '" + c.name + "': expected an integer", at);
                }
                c.ints.push_back(x);
                c.valid.push_back(1);
                return;
            }
            case ColumnKind::Bool: {
                std::int64_t x = 0;
                if (t == od::json_type::boolean) {
                    bool b;
                    if (v.get_bool().get(b)) fail("field '" + c.name + "': bad boolean", at);
                    x = b;
                } else if (t == od::json_type::number) {
                    if (v.get_int64().get(x)) fail("field '" + c.name + "': expected a boolean", at);
                    x = x != 0;
                } else {
                    fail("field '" + c.name + "': expected a boolean", at);
                }
                c.ints.push_back(x);
                c.valid.push_back(1);
                return;
            }
            case ColumnKind::Float64: {
                double d = 0;
                if (t == od::json_type::number) {
                    if (v.get_double().get(d)) fail("field '" + c.name + "': not a number", at);
                } else if (t == od::json_type::string) {
                    std::string_view s;
                    if (v.get_string().get(s)) fail("field '" + c.name + "': bad string", at);
                    if (s.empty()) { null_at(c); return; }
                    auto r = charconv::from_chars(s.data(), s.data() + s.size(), d);
                    if (r.ec != std::errc() || r.ptr != s.data() + s.size())
                        fail("field '" + c.name + "': expected a decimal, got \"" + std::string(s) + "\"", at);
                } else {
                    fail("field '" + c.name + "': expected a decimal", at);
                }
                c.floats.push_back(d);
                c.valid.push_back(1);
                return;
            }
            case ColumnKind::String: {
                std::string_view s;
                if (t == od::json_type::string) {
                    if (v.get_string().get(s)) fail("field '" + c.name + "': bad string", at);
                } else if (t == od::json_type::number || t == od::json_type::boolean) {
                    s = v.raw_json_token();
                    while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t'))
                        s.remove_suffix(1);
                } else {
                    fail("field '" + c.name + "': expected a string", at);
                }
                push_string(c, s);
                return;
            }
            case ColumnKind::Timestamp: {
                std::string_view s;
                if (t != od::json_type::string || v.get_string().get(s))
                    fail("field '" + c.name + "': expected an ISO 8601 timestamp string", at);
                if (s.empty()) { null_at(c); return; }
                std::int64_t us;
                int off;
                if (!parse_timestamp(s, us, off))
                    fail("field '" + c.name + "': malformed timestamp \"" + std::string(s) + "\"", at);
                c.ints.push_back(us);
                c.utc_offset_minutes.push_back(static_cast<std::int16_t>(off));
                c.valid.push_back(1);
                return;
            }
            case ColumnKind::Json: {
                std::string_view raw;
                simdjson::error_code err;
                if (t == od::json_type::object) {
                    od::object o;
                    err = v.get_object().get(o);
                    if (!err) err = o.raw_json().get(raw);
                } else if (t == od::json_type::array) {
                    od::array a;
                    err = v.get_array().get(a);
                    if (!err) err = a.raw_json().get(raw);
                } else {
                    raw = v.raw_json_token();
                    err = simdjson::SUCCESS;
                }
                if (err) fail("field '" + c.name + "': malformed nested value", at);
                if (nesting_depth(raw) > kMaxNesting)
                    fail("field '" + c.name + "': nested deeper than " + std::to_string(kMaxNesting) + " levels", at);
                while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\n' || raw.back() == '\r' || raw.back() == '\t'))
                    raw.remove_suffix(1);
                push_string(c, raw);
                return;
            }
        }
    }

    // One record: an object whose keys are looked up among the columns.
    void record(od::value v) {
        const char* at = nullptr;  // fail() asks the document where it stopped
        od::json_type t;
        if (v.type().get(t)) fail("malformed record", at);
        if (t != od::json_type::object) {
            // Scalar elements: one-field records (years, attribute values).
            if (cols.size() != 1 || t == od::json_type::array)
                fail("expected a record object, found a " + std::string(t == od::json_type::array ? "array" : "scalar"), at);
            value_into(cols[0], v);
            ++row;
            return;
        }
        od::object obj;
        if (v.get_object().get(obj)) fail("malformed record object", at);
        std::size_t hint = 0;
        std::size_t n = 0;  // ordinal of the field in the record
        for (auto field_result : obj) {
            od::field field;
            if (std::move(field_result).get(field)) fail("malformed record object", at);
            const std::size_t pos = n++;
            od::raw_json_string raw = field.key();
            // Fast path: the key this position had in an earlier record (the plan).
            if (pos < plan.size() && plan[pos].known && raw.unsafe_is_equal(plan[pos].key)) {
                const int k = plan[pos].column;
                // a key of no column, or repeated: skip its value (consumed by the iterator)
                if (k == kSkip || cols[static_cast<std::size_t>(k)].valid.size() != row) continue;
                hint = static_cast<std::size_t>(k) + 1;
                value_into(cols[static_cast<std::size_t>(k)], field.value());
                continue;
            }
            // Else the raw key equals the next expected column (records come in schema order);
            // then any column; then the unescaped key.
            Column* target = nullptr;
            std::string_view key;  // the unescaped key, when the raw one matched no column
            if (hint < cols.size() && raw.unsafe_is_equal(cols[hint].name)) {
                target = &cols[hint];
                learn(pos, raw, static_cast<int>(hint));
            } else {
                for (std::size_t i = 0; i < cols.size(); ++i)
                    if (raw.unsafe_is_equal(cols[i].name)) {
                        target = &cols[i];
                        hint = i;
                        learn(pos, raw, static_cast<int>(i));
                        break;
                    }
                // A key with no escape is its raw text: none of the columns (a projection skips
                // most keys of a record: no unescaping, no second scan).
                if (!target && (aliases || has_escape(raw))) {
                    if (field.unescaped_key().get(key)) fail("malformed key", at);  // read once only
                    for (std::size_t i = 0; i < cols.size(); ++i)
                        if (cols[i].name == key) { target = &cols[i]; hint = i; break; }
                }
            }
            bool first_of_array = false;
            if (!target && aliases) {
                // The legacy trim's older verbose shape (arrays named bodies, engines, ...):
                // decoded into the documented members, so both shapes give the same records.
                for (const auto& a : *aliases)
                    if (key == a.old_key)
                        for (auto& c : cols)
                            if (c.name == a.member) { target = &c; first_of_array = a.first; }
            }
            if (!target || target->valid.size() != row) {
                // unknown or repeated key: skip its value (consumed by the iterator)
                if (!target && !aliases && key.empty()) learn(pos, raw, kSkip);  // raw text without escape
                continue;
            }
            ++hint;
            if (first_of_array) {
                od::value v = field.value();
                od::json_type t;
                od::array a;
                if (v.type().get(t) || t != od::json_type::array || v.get_array().get(a))
                    fail("field '" + target->name + "': expected an array", at);
                bool found = false;
                for (auto el : a) {
                    od::value ev;
                    if (std::move(el).get(ev)) fail("field '" + target->name + "': malformed array", at);
                    if (!found) value_into(*target, ev);
                    found = true;
                    break;
                }
                if (!found) null_at(*target);
                continue;
            }
            value_into(*target, field.value());
        }
        ++row;
        for (auto& c : cols)
            if (c.valid.size() < row) null_at(c);
    }

    void collection(od::value v, Collection& out) {
        od::object obj;
        if (v.get_object().get(obj)) fail("collection is not an object", nullptr);
        out.present = true;
        for (auto fr : obj) {
            od::field f;
            if (std::move(fr).get(f)) fail("malformed collection", nullptr);
            std::string_view key;
            if (f.unescaped_key().get(key)) fail("malformed collection key", nullptr);
            const envelope::Member<Collection>* m = envelope::collection_member(key);
            if (!m) continue;
            od::value val = f.value();
            std::string* s = m->text ? &(out.*m->text) : nullptr;
            std::int64_t* n = m->number ? &(out.*m->number) : nullptr;
            od::json_type t;
            if (val.type().get(t)) fail("malformed collection." + std::string(key), nullptr);
            if (t == od::json_type::null) continue;
            if (s) {
                std::string_view sv;
                if (val.get_string().get(sv)) fail("collection." + std::string(key) + " is not a string", nullptr);
                s->assign(sv);
            } else {
                if (val.get_int64().get(*n)) fail("collection." + std::string(key) + " is not an integer", nullptr);
            }
        }
    }
};

}  // namespace

bool parse_timestamp(std::string_view s, std::int64_t& epoch_us, int& offset_minutes) {
    int y, mo, d, h, mi, sec;
    if (s.size() < 19 || !digits(s, 0, 4, y) || s[4] != '-' || !digits(s, 5, 2, mo) || s[7] != '-' ||
        !digits(s, 8, 2, d) || (s[10] != 'T' && s[10] != ' ') || !digits(s, 11, 2, h) || s[13] != ':' ||
        !digits(s, 14, 2, mi) || s[16] != ':' || !digits(s, 17, 2, sec))
        return false;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return false;
    std::size_t p = 19;
    std::int64_t frac_us = 0;
    if (p < s.size() && s[p] == '.') {
        ++p;
        int nd = 0;
        while (p < s.size() && s[p] >= '0' && s[p] <= '9') {
            if (nd < 6) { frac_us = frac_us * 10 + (s[p] - '0'); }
            ++nd;
            ++p;
        }
        if (nd == 0) return false;
        for (int k = nd; k < 6; ++k) frac_us *= 10;
    }
    int off = 0;
    if (p < s.size()) {
        if (s[p] == 'Z' || s[p] == 'z') {
            ++p;
        } else if (s[p] == '+' || s[p] == '-') {
            int sign = s[p] == '-' ? -1 : 1;
            int oh, om;
            if (!digits(s, p + 1, 2, oh)) return false;
            std::size_t q = p + 3;
            if (q < s.size() && s[q] == ':') ++q;
            if (!digits(s, q, 2, om)) return false;
            p = q + 2;
            if (oh > 23 || om > 59) return false;
            off = sign * (oh * 60 + om);
        } else {
            return false;
        }
    }
    if (p != s.size()) return false;
    std::int64_t days = format::days_from_civil(static_cast<int>(y), static_cast<unsigned>(mo), static_cast<unsigned>(d));
    std::int64_t secs = days * 86400 + h * 3600 + mi * 60 + sec - static_cast<std::int64_t>(off) * 60;
    epoch_us = secs * 1000000 + frac_us;
    offset_minutes = off;
    return true;
}

std::vector<const schema::Field*> decoded_fields(const schema::Record& record, bool verbose, schema::Shape shape) {
    (void)shape;
    return record.record_fields(verbose);
}

schema::Record project_record(const schema::Record& record, const std::vector<std::string>& fields) {
    for (const std::string& name : fields)
        if (!record.field(name))
            throw std::invalid_argument("record '" + record.name + "' has no field '" + name + "' to decode");
    schema::Record out = record;
    out.fields.clear();
    for (const schema::Field& f : record.fields)
        if (std::find(fields.begin(), fields.end(), f.name) != fields.end()) out.fields.push_back(f);
    return out;
}

Page decode_page(const std::string& body, const schema::Record& record, schema::Shape shape, const std::string& url,
                 bool verbose) {
    thread_local od::parser thread_parser;
    ParserLease lease{thread_parser};
    od::parser& parser = lease.parser;
    Page page;
    page.url = url;
    page.record = record.name;
    page.body_bytes = body.size();
    const std::vector<const schema::Field*> fields = decoded_fields(record, verbose, shape);
    page.columns.reserve(fields.size());
    for (const schema::Field* f : fields) {
        Column c;
        c.name = f->name;
        c.type = f->type;
        c.kind = column_kind(f->type);
        page.columns.push_back(std::move(c));
    }
    // A padded view of the body (copy only if there is no spare capacity).
    simdjson::padded_string copy;
    simdjson::padded_string_view view;
    if (body.capacity() >= body.size() + simdjson::SIMDJSON_PADDING) {
        view = simdjson::padded_string_view(body.data(), body.size(), body.capacity());
    } else {
        copy = simdjson::padded_string(body);
        view = simdjson::padded_string_view(copy);
    }
    Builder b{page.columns, url, view.data(), view.data() + view.size()};
    if (schema::record_quirk(record) == schema::Quirk::LegacyTrimVerbose) b.aliases = &schema::legacy_trim_aliases();
    // Room for a somewhat larger page: the pages of a crawl differ in size by a few percent, and
    // each reallocation holds the old buffers and the new at once.
    if (parser.capacity() < view.size()) {
        auto err = parser.allocate(view.size() + view.size() / 8);
        (void)err;  // on failure, iterate() tries the exact size and reports
    }
    od::document doc;
    if (auto err = parser.iterate(view).get(doc)) b.fail(std::string("malformed JSON: ") + simdjson::error_message(err), view.data());
    b.doc = &doc;
    auto where = [&]() -> const char* {
        auto loc = doc.current_location();
        return loc.error() ? view.data() + view.size() : loc.value_unsafe();
    };
    try {
        od::json_type t;
        if (doc.type().get(t)) b.fail("malformed JSON document", where());
        if (shape == schema::Shape::Envelope) {
            if (t != od::json_type::object) b.fail("expected a collection envelope object", view.data());
            od::object obj;
            if (doc.get_object().get(obj)) b.fail("malformed envelope", where());
            bool saw_data = false;
            for (auto fr : obj) {
                od::field f;
                if (std::move(fr).get(f)) b.fail("malformed envelope", where());
                std::string_view key;
                if (f.unescaped_key().get(key)) b.fail("malformed envelope key", where());
                if (key == "collection") {
                    b.collection(f.value(), page.collection);
                } else if (key == "data") {
                    saw_data = true;
                    if (page.collection.count > 0 && page.collection.count <= 100000)
                        b.reserve(static_cast<std::size_t>(page.collection.count));
                    od::array arr;
                    if (f.value().get_array().get(arr)) b.fail("envelope member 'data' is not an array", where());
                    for (auto er : arr) {
                        od::value v;
                        if (std::move(er).get(v)) b.fail("malformed data array", where());
                        b.record(v);
                    }
                }
            }
            if (!saw_data) b.fail("envelope has no 'data' member", nullptr);
        } else if (shape == schema::Shape::Array) {
            if (t != od::json_type::array) b.fail("expected a JSON array", view.data());
            od::array arr;
            if (doc.get_array().get(arr)) b.fail("malformed array", where());
            for (auto er : arr) {
                od::value v;
                if (std::move(er).get(v)) b.fail("malformed array", where());
                b.record(v);
            }
        } else {
            if (t != od::json_type::object) b.fail("expected a JSON object", view.data());
            od::value v;
            if (doc.get_value().get(v)) b.fail("malformed object", where());
            b.record(v);
        }
    } catch (const simdjson::simdjson_error& e) {
        b.fail(std::string("malformed JSON: ") + e.what(), where());
    }
    page.rows = b.row;
    return page;
}

}  // namespace vehicledata::client
