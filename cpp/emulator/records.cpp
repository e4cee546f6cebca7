// Record plans and row writers (JSON and CSV).
#include "records.h"

#include "vehicledata/format.h"

namespace vehicledata::emulator {

using schema::Type;

int Plan::column_of(std::string_view sql) const {
    for (const auto& it : items)
        if (it.column >= 0 && it.field->sql() == sql) return it.column;
    return -1;
}

Plan make_plan(const schema::Record& record, bool verbose) {
    Plan p;
    p.record = &record;
    for (const auto& f : record.fields) {
        const bool include = f.in_record || (verbose && f.verbose_only);
        if (!include) continue;
        PlanItem it;
        it.field = &f;
        format::append_json_string(it.key, f.name);
        it.key.push_back(':');
        if (f.type != Type::Nested) {
            it.column = p.column_count++;
            if (!p.select_list.empty()) p.select_list.append(", ");
            p.select_list.append(f.sql());
        }
        p.items.push_back(std::move(it));
    }
    return p;
}

void write_json_value(std::string& out, sqlite3_stmt* s, int c, const schema::Field& f) {
    if (sqlite3_column_type(s, c) == SQLITE_NULL) {
        out.append("null");
        return;
    }
    switch (f.type) {
        case Type::Int:
        case Type::Int64:
            format::append_int(out, sqlite3_column_int64(s, c));
            break;
        case Type::Bool:
            out.append(sqlite3_column_int64(s, c) ? "true" : "false");
            break;
        case Type::Decimal:
            out.push_back('"');
            format::append_decimal(out, sqlite3_column_double(s, c), f.scale);
            out.push_back('"');
            break;
        case Type::Float:
            format::append_double(out, sqlite3_column_double(s, c));
            break;
        default: {
            const unsigned char* text = sqlite3_column_text(s, c);
            int n = sqlite3_column_bytes(s, c);
            format::append_json_string(out, std::string_view(reinterpret_cast<const char*>(text), static_cast<std::size_t>(n)));
        }
    }
}

void write_json_row(std::string& out, sqlite3_stmt* s, const Plan& plan, const NestedWriter& nested) {
    out.push_back('{');
    bool first = true;
    for (const auto& it : plan.items) {
        if (!first) out.push_back(',');
        first = false;
        out.append(it.key);
        if (it.column < 0) {
            if (nested) nested(out, it);
            else out.append("null");
        } else {
            write_json_value(out, s, it.column, *it.field);
        }
    }
    out.push_back('}');
}

namespace {
std::uint64_t row_key(int plan_id, std::int64_t rowid) {
    return (static_cast<std::uint64_t>(plan_id) << 48) ^ static_cast<std::uint64_t>(rowid);
}
}  // namespace

bool RowCache::append(std::string& out, int plan_id, std::int64_t rowid, std::uint64_t generation) {
    const std::uint64_t key = row_key(plan_id, rowid);
    Shard& s = shards_[(key * 0x9E3779B97F4A7C15ULL) >> 59];
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.generation != generation) return false;
    auto it = s.rows.find(key);
    if (it == s.rows.end()) return false;
    out.append(it->second);
    return true;
}

void RowCache::put(int plan_id, std::int64_t rowid, std::string_view json, std::uint64_t generation) {
    const std::uint64_t key = row_key(plan_id, rowid);
    Shard& s = shards_[(key * 0x9E3779B97F4A7C15ULL) >> 59];
    std::lock_guard<std::mutex> lock(s.mutex);
    if (generation < s.generation) return;
    if (s.bytes + json.size() > kShardBytes || generation != s.generation) {
        s.generation = generation;
        s.rows.clear();
        s.bytes = 0;
    }
    if (s.rows.emplace(key, std::string(json)).second) s.bytes += json.size() + 64;
}

namespace {
void append_csv_field(std::string& out, std::string_view v) {
    if (v.find_first_of(",\"\r\n") == std::string_view::npos) {
        out.append(v);
        return;
    }
    out.push_back('"');
    for (char c : v) {
        if (c == '"') out.push_back('"');
        out.push_back(c);
    }
    out.push_back('"');
}
}  // namespace

void write_csv_header(std::string& out, const Plan& plan) {
    bool first = true;
    for (const auto& it : plan.items) {
        if (it.column < 0) continue;
        if (!first) out.push_back(',');
        first = false;
        append_csv_field(out, it.field->name);
    }
    out.append("\r\n");
}

void write_csv_row(std::string& out, sqlite3_stmt* s, const Plan& plan) {
    bool first = true;
    for (const auto& it : plan.items) {
        if (it.column < 0) continue;
        if (!first) out.push_back(',');
        first = false;
        const int c = it.column;
        if (sqlite3_column_type(s, c) == SQLITE_NULL) continue;  // empty field
        switch (it.field->type) {
            case Type::Int:
            case Type::Int64:
                format::append_int(out, sqlite3_column_int64(s, c));
                break;
            case Type::Bool:
                out.append(sqlite3_column_int64(s, c) ? "true" : "false");
                break;
            case Type::Decimal:
                format::append_decimal(out, sqlite3_column_double(s, c), it.field->scale);
                break;
            case Type::Float:
                format::append_double(out, sqlite3_column_double(s, c));
                break;
            default:
                append_csv_field(out, std::string_view(reinterpret_cast<const char*>(sqlite3_column_text(s, c)),
                                                       static_cast<std::size_t>(sqlite3_column_bytes(s, c))));
        }
    }
    out.append("\r\n");
}

}  // namespace vehicledata::emulator
