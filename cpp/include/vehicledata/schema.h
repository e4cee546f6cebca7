// The schema table: the single source of truth for every record and endpoint.
//
// Every record the service returns, every storage table the emulator reads,
// every filter, json-searchable field and sort key is declared once, in
// cpp/core/schema.cpp.  The emulator's SQL and JSON writer, the client's
// decoder, the Python dtypes, the condition validator, the dataset builder's
// CREATE TABLE statements and docs/resources.md all read these tables.
//
// Thread safety: the tables are immutable after static initialisation; every
// function here may be called from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vehicledata::schema {

// How a field is typed on the wire.
enum class Type {
    Int,        // JSON integer that fits int32
    Int64,      // JSON integer
    Decimal,    // decimal measurement rendered as a JSON string ("2.0"), stored as REAL
    Float,      // JSON number
    String,     // JSON string
    Timestamp,  // ISO 8601 with UTC offset, JSON string
    Date,       // YYYY-MM-DD, JSON string
    Bool,       // JSON true/false
    Nested,     // object or array of objects of another record (see Field::nested)
};

std::string_view type_name(Type t);

struct Field {
    std::string name;
    Type type = Type::String;
    bool nullable = false;
    int max_length = 0;                    // 0: not stated
    std::vector<std::string> enum_values;  // empty: not enumerated
    // SQL expression that yields the value from the endpoint's table; empty
    // means the column of the same name.
    std::string column;
    int scale = 1;            // digits after the point for Decimal rendering
    bool in_record = true;    // false: a stored, searchable column not in the JSON record
    bool verbose_only = false;  // in the record only with verbose=yes (legacy endpoints)
    std::string nested;       // Nested: name of the element record
    bool nested_array = false;  // Nested: an array of elements (else one object)
    // Nested: how the element rows are found.
    //  - array of a stored record: the column of its table that holds the parent's id ("trim_id");
    //  - one object: the parent's column that holds the element's id ("model_id");
    //  - array of a synthetic record: "table.column" whose distinct values fill it
    //    ("engines.transmission").
    std::string nested_key;
    // Nested one object found like an array element: the first row (by id) of the
    // element's table whose `nested_key` column holds the parent's id (legacy
    // make_model_trim_body and friends); null when there is none.
    bool nested_by_parent_id = false;

    std::string_view sql() const { return column.empty() ? std::string_view(name) : std::string_view(column); }
};

struct Record {
    std::string name;       // e.g. "trim", "trim_detail", "body_legacy"
    std::string table;      // storage table it is read from ("" for synthetic records)
    bool primary = false;   // true: its fields (in_record or not) define the storage table
    std::vector<Field> fields;

    const Field* field(std::string_view name) const;
    // Fields of the JSON record, in order: in_record ones, plus verbose_only ones when verbose.
    std::vector<const Field*> record_fields(bool verbose = false) const;
};

enum class Match { Value, Like };

struct Filter {
    std::string name;   // query parameter
    Match match = Match::Value;
    // SQL expression the parameter is compared with; empty: the record
    // field's own expression.  May instead be a full predicate containing
    // the placeholder "?" (then `predicate` is true).
    std::string column;
    bool predicate = false;
    // Non-empty: the parameter matches the endpoint's rows that have a row in
    // related_table (related_table.related_key = id) whose `column` equals the
    // value, e.g. makes?year=2019.  Build the SQL with related_predicate(), which
    // keeps demo callers inside the demo data-set of the related table.
    std::string related_table;
    std::string related_key;
    // Non-empty: the parameter is required and must be one of these values (else a 400); it
    // names the catalogue the endpoint serves and adds no condition (powersports `type`).
    std::vector<std::string> one_of;
};

// A field addressable in the `json` parameter.
struct JsonField {
    std::string name;        // e.g. "year" or "engines.fuel_type"
    Type type = Type::String;
    std::string column;      // SQL expression on the endpoint's table (or related table)
    std::string related_table;  // non-empty for dotted names: id IN (SELECT related_key FROM this table ...)
    std::string related_key;    // column of related_table that refers to the endpoint's `id`
    std::vector<std::string> enum_values;
};

struct SortKey {
    std::string name;    // the value of the `sort` parameter
    std::string column;  // SQL expression
};

enum class Shape {
    Envelope,     // collection envelope + data
    Array,        // bare JSON array (years, vehicle-attributes)
    Object,       // one record (detail)
};

// What an endpoint does: the emulator picks its handler, the client its accessor by it.
enum class Kind {
    Search,            // a paged search of `resource` (collection envelope)
    Detail,            // one record of `resource` by its path parameter ({id} or {code})
    Years,             // the model years of the matching trims (bare array)
    Attributes,        // the values of one vehicle attribute (bare array)
    Vin,               // VIN decoding
    Plate,             // licence plate lookup
    AccountRequests,   // requests per day
    AccountToday,      // requests today
    FeedLastUpdated,   // when the data feed was last built
    FeedDownload,      // the data feed's ZIP
    Login,             // POST token and secret, answered with a JWT
};
std::string_view kind_name(Kind k);  // "search", "detail", "years", ..., "account_today", "login"

// A behaviour of the service that one endpoint has and the rest do not.
enum class Quirk {
    None,
    // A legacy trim (docs/resources.md, `trim_legacy`) may arrive in the service's older
    // verbose shape: arrays named bodies, engines, mileages, exterior_colors and
    // interior_colors (typed as trim_detail's) instead of the documented make_model_trim_*
    // members.  The decoder reads them into the documented members (legacy_trim_aliases()),
    // the Python records type them by trim_detail's fields.
    LegacyTrimVerbose,
};
std::string_view quirk_name(Quirk q);  // "", "legacy_trim_verbose"

struct Endpoint {
    std::string path;          // e.g. "/api/trims/v2", "/api/trims/v2/{id}"
    std::string resource;      // what it serves, as the client's accessor: "trims", "exterior_colors", "account"
    Kind kind = Kind::Search;
    std::string method = "GET";
    std::string category;      // the service's category, e.g. "Trims"
    std::string record;        // record name of each data element
    std::string table;         // storage table queried ("" for none)
    Shape shape = Shape::Envelope;
    // The deprecated endpoint this one replaces ("/api/trims" for "/api/trims/v2"), or "".
    std::string deprecates;
    // The endpoint that replaces this one, when deprecated (filled from `deprecates`).
    std::string replaced_by;
    bool deprecated = false;   // true exactly when replaced_by is set
    Quirk quirk = Quirk::None;
    bool text_errors = false;  // errors answered as text/plain (login, data feed download), not JSON
    bool paged = true;
    bool verbose = false;      // accepts verbose=yes|no
    std::vector<Filter> filters;
    std::vector<JsonField> json_fields;   // empty: no `json` parameter
    std::vector<SortKey> sort_keys;
    std::string default_sort;  // SQL ORDER BY used without `sort`
    // SQL predicate restricting rows to the demo data-set (model years 2015-2020)
    std::string demo_predicate;

    const Filter* filter(std::string_view name) const;
    const JsonField* json_field(std::string_view name) const;
    const SortKey* sort_key(std::string_view name) const;
    bool accepts_json() const { return !json_fields.empty(); }
};

// Paging limits, documented in docs/resources.md.
inline constexpr int kDefaultLimit = 100;
inline constexpr int kMaxLimit = 1000;
inline constexpr int kDemoFirstYear = 2015;
inline constexpr int kDemoLastYear = 2020;

// SQL predicate restricting a storage table's own rows to the demo data-set:
// "year BETWEEN 2015 AND 2020" for the tables with a model year, "demo = 1" for
// obd_codes, "" for tables without either (makes, models: their endpoints
// restrict through trims, see Endpoint::demo_predicate).
std::string table_demo_predicate(std::string_view table);

// "id IN (SELECT key FROM table WHERE condition)": the predicate of a related
// filter or json field.  With demo = true the related rows are also limited to
// the table's demo data-set (table_demo_predicate), so a row related to both a
// demo and a non-demo row is not found through the non-demo one.
std::string related_predicate(std::string_view related_table, std::string_view related_key,
                              std::string_view condition, bool demo);

const std::vector<Record>& records();
const std::vector<Endpoint>& endpoints();
const Record* find_record(std::string_view name);
const Endpoint* find_endpoint(std::string_view path);
// The endpoint of a kind (and resource, for searches and details: "trims"); with
// `deprecated`, the deprecated one it replaced.  nullptr when there is none.
const Endpoint* find_endpoint(Kind kind, std::string_view resource = {}, bool deprecated = false);
// The path parameter of a detail-like path ("id" for "/api/trims/v2/{id}"), or "".
std::string_view path_parameter(const Endpoint& e);
// The quirk of the endpoints that serve `record` (Quirk::None when none has one).
Quirk record_quirk(const Record& record);

// LegacyTrimVerbose: an older key of the legacy trim and the documented member it
// decodes into (`first`: the first element of the old array becomes the member's object).
struct LegacyAlias {
    std::string_view old_key, member;
    bool first;
};
const std::vector<LegacyAlias>& legacy_trim_aliases();
// The primary record of a storage table (the one whose fields define it).
const Record* table_record(std::string_view table);
// SQLite column type of a field: INTEGER, REAL or TEXT.
std::string_view sqlite_type(Type t);

// vehicle-attributes: attribute name -> (table, column)
struct Attribute {
    std::string name;   // e.g. "engines.fuel_type"
    std::string table;
    std::string column;
};
const std::vector<Attribute>& attributes();
const Attribute* find_attribute(std::string_view name);

}  // namespace vehicledata::schema
