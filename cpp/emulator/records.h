// Record plans: which columns to select for a schema record and how to write
// each selected row as JSON (or CSV), in the schema's field order.
//
// Thread safety: plans are immutable after construction and may be shared;
// writing uses the caller's statement and buffer.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <string>
#include <vector>

#include "vehicledata/schema.h"

namespace vehicledata::emulator {

struct PlanItem {
    const schema::Field* field = nullptr;
    std::string key;     // '"name":' (JSON key with colon, escaped)
    int column = -1;     // index in the SELECT list; -1 for Nested fields
};

struct Plan {
    const schema::Record* record = nullptr;
    std::vector<PlanItem> items;    // in field order (Nested included)
    std::string select_list;        // "id, make_id, ..." (scalar items only)
    int column_count = 0;
    int id = 0;                     // small number naming the plan in RowCache keys
    // Index in the SELECT list of the column whose SQL is `sql`, or -1.
    int column_of(std::string_view sql) const;
};

// Plan of a record: its in_record fields; with `verbose`, also the hidden
// fields that are not timestamps (the legacy endpoints' verbose=yes).
Plan make_plan(const schema::Record& record, bool verbose = false);

// Writes the statement's current row as a JSON object.  `nested` is called for
// each Nested item (after its key was written) to write its value.
using NestedWriter = std::function<void(std::string& out, const PlanItem& item)>;
void write_json_row(std::string& out, sqlite3_stmt* stmt, const Plan& plan, const NestedWriter& nested = {});
// Writes one scalar column value as JSON (null, number, "decimal", "string").
void write_json_value(std::string& out, sqlite3_stmt* stmt, int column, const schema::Field& field);

// Rendered JSON of rows, keyed by (plan, rowid): the database is read-only,
// so a row renders the same every time.  Thread-safe (sharded mutexes); each
// shard holds at most kShardBytes of text and starts over past that.
class RowCache {
public:
    // Appends the cached text to out and returns true, or returns false.  `generation` is the
    // store's data_generation() taken before the row was read: a shard holds the rows of one
    // generation and starts over on a newer one; a row of an older one is not kept.
    bool append(std::string& out, int plan_id, std::int64_t rowid, std::uint64_t generation);
    void put(int plan_id, std::int64_t rowid, std::string_view json, std::uint64_t generation);
    static constexpr std::size_t kShards = 32;
    static constexpr std::size_t kShardBytes = 4u << 20;

private:
    struct Shard {
        std::mutex mutex;
        std::unordered_map<std::uint64_t, std::string> rows;
        std::size_t bytes = 0;
        std::uint64_t generation = 0;
    };
    Shard shards_[kShards];
};

// CSV (RFC 4180): header of scalar items, and the current row.
void write_csv_header(std::string& out, const Plan& plan);
void write_csv_row(std::string& out, sqlite3_stmt* stmt, const Plan& plan);

}  // namespace vehicledata::emulator
