// A page of records decoded once into typed columns.
//
// simdjson On-Demand walks the body a single time and appends each field of
// each record to the column the schema table gives it:
//   int, int64      -> int64 values + validity
//   bool            -> int64 0/1 + validity
//   decimal, float  -> float64 + validity (decimal strings such as "2.0" are parsed)
//   string, date    -> UTF-8 bytes + int64 offsets + validity
//   timestamp       -> int64 microseconds since the epoch (UTC instant)
//                      + the original UTC offset in minutes + validity
//   nested          -> the raw JSON text of the value (decoded on demand)
// Missing fields and nulls are invalid entries; unknown fields are skipped;
// `\/`-escaped strings are accepted.  A malformed body throws DecodeError with
// the URL and the byte position.
//
// Threading: decode_page() uses a thread-local parser; Page is a plain value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vehicledata/envelope.h"
#include "vehicledata/schema.h"

namespace vehicledata::client {

enum class ColumnKind { Int64, Float64, Bool, String, Timestamp, Json };

struct Column {
    std::string name;
    schema::Type type = schema::Type::String;
    ColumnKind kind = ColumnKind::String;
    std::vector<std::int64_t> ints;         // Int64, Bool, Timestamp
    std::vector<double> floats;             // Float64
    std::vector<std::int64_t> offsets{0};   // String, Json: rows + 1 entries (Arrow large_string layout)
    std::string bytes;                      // String, Json
    std::vector<std::int16_t> utc_offset_minutes;  // Timestamp
    std::vector<std::uint8_t> valid;        // 1: value present, 0: null or missing
    std::size_t null_count = 0;

    std::size_t size() const { return valid.size(); }
    std::string_view str(std::size_t i) const {
        return std::string_view(bytes).substr(static_cast<std::size_t>(offsets[i]),
                                              static_cast<std::size_t>(offsets[i + 1] - offsets[i]));
    }
};

// The paging block of a collection envelope (vehicledata/envelope.h).
using Collection = envelope::Collection;

struct Page {
    std::string url;          // the URL requested
    std::string record;       // schema record name
    Collection collection;
    std::size_t rows = 0;
    std::size_t body_bytes = 0;
    std::vector<Column> columns;  // one per record field, in schema order
    // The fields the emulator's X-Emulator-Synthetic header named (no public source; nested
    // members as "field.member"), in the header's order; empty for the live service.
    std::vector<std::string> synthetic;

    const Column* column(std::string_view name) const;
};

// The fields of an X-Emulator-Synthetic value ("msrp,invoice,engines.valves"): split on commas,
// trimmed, empty items dropped.
std::vector<std::string> synthetic_fields(std::string_view header);
// Adds to `dst` the fields of `src` it does not list yet (pages of one crawl: the union, in order).
void merge_synthetic(std::vector<std::string>& dst, const std::vector<std::string>& src);

ColumnKind column_kind(schema::Type type);

// Reserves room in `c` (of its kind's buffers) for `rows` rows and, for text (String, Json),
// `bytes` bytes of it; what it holds is kept.
void reserve_column(Column& c, std::size_t rows, std::size_t bytes);

// An empty page with the columns of `src` (same record), rows reserved (text: reserve_bytes_per_row,
// else the bytes per row of `src` with room for longer text, so that a merged page does not regrow).
Page empty_like(const Page& src, std::size_t reserve_rows = 0, std::size_t reserve_bytes_per_row = 0);
// Append src's rows to dst (same record and columns) and release src's
// buffers.  Throws std::invalid_argument on mismatched pages.
void append_page(Page& dst, Page&& src);
// The same, copying: src is left as it was (a crawl's first page, kept by its caller).
void append_page(Page& dst, const Page& src);
// Concatenate pages of one record (reserved exactly: capacity == size), releasing each
// source's buffers as it goes.
Page concat_pages(const std::vector<Page*>& pages);

// One input of gather_columns(): the columns `names` of `page`, named `as` in the result (same
// length as `names`), taken at `rows` (an index into `page` per result row, -1: a null) or, when
// `all_rows`, every row of `page` in order.
struct ColumnSource {
    const Page* page = nullptr;
    std::vector<std::int64_t> rows;
    bool all_rows = false;
    std::vector<std::string> names;
    std::vector<std::string> as;
};
// A page of `rows` rows whose columns are gathered from `sources`, in order (a join on row
// indices computed elsewhere, or a filter): values are copied, types and kinds kept; `record`
// names the result's layout.  Throws std::invalid_argument for an unknown column, a row index
// outside its page or a source with another number of rows than `rows`.
Page gather_columns(const std::vector<ColumnSource>& sources, std::size_t rows, std::string record);

// Per value of `keys` (an Int64 column), the row of `lookup` (an Int64 column) holding the same
// value, the first such row when several do; -1 where there is none or either value is null
// (a left join's row indices, found with one hash table of `lookup`).  Throws
// std::invalid_argument for a column of another kind.
std::vector<std::int64_t> match_rows(const Column& keys, const Column& lookup);

// One right side of join_columns(): the columns `names` of `page` (named `as` in the result),
// its rows matched on its column `key`.
struct JoinSource {
    const Page* page = nullptr;
    std::string key;
    std::vector<std::string> names;
    std::vector<std::string> as;
};
// A left outer join on integer keys: every row of `left` in order with its columns `names`
// (named `as`), then each right side's columns at the row whose `key` equals left's `left_key`
// (match_rows(): the first such row; nulls where none).  gather_columns() of the matched rows.
Page join_columns(const Page& left, const std::string& left_key, const std::vector<std::string>& names,
                  const std::vector<std::string>& as, const std::vector<JoinSource>& rights, std::string record);

// The fields decode_page() makes columns of: record.record_fields(verbose).
// A record whose endpoints have Quirk::LegacyTrimVerbose (the legacy trim) in the
// older verbose shape (arrays bodies, engines, mileages, exterior_colors,
// interior_colors) decodes into the documented members (schema::legacy_trim_aliases():
// make_model_trim_body is the first element of bodies, and so on).
std::vector<const schema::Field*> decoded_fields(const schema::Record& record, bool verbose, schema::Shape shape);

// A decode projection: `record` with only its fields named in `fields` (the record's order kept).
// decode_page() with it makes just those columns and skips the other keys of each record, as it
// skips unknown ones (a caller that needs a few columns of wide pages: api.vehicles' parts).
// Throws std::invalid_argument naming a field the record does not have.
schema::Record project_record(const schema::Record& record, const std::vector<std::string>& fields);

// Decode a body.  Shape Envelope: {"collection":..., "data":[...]}; Array: a
// bare array of records or of scalars (one-field records such as years);
// Object: one record.  `verbose`: the request asked for verbose=yes (columns
// per decoded_fields()).  `body` is copied into a padded buffer unless its
// capacity already has 64 spare bytes.  Invalid UTF-8 raises DecodeError.
Page decode_page(const std::string& body, const schema::Record& record, schema::Shape shape, const std::string& url,
                 bool verbose = false);

// ISO 8601 "YYYY-MM-DDTHH:MM:SS[.ffffff][Z|+HH:MM|-HHMM]" (a space may
// replace T; no zone means UTC).  Returns false if malformed.
bool parse_timestamp(std::string_view text, std::int64_t& epoch_us, int& offset_minutes);

}  // namespace vehicledata::client
