// Conditions: the `json` query parameter, shared by the client and the emulator.
//
// A condition is {field, op, val}.  Several conditions AND together.  The client
// validates and encodes conditions before a request leaves; the emulator parses
// the same grammar and turns it into SQL with bound parameters (never spliced
// values).
//
// Thread safety: all functions are pure; call them from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "vehicledata/schema.h"

namespace vehicledata::query {

enum class Op { Eq, Ne, Gt, Lt, Ge, Le, In, NotIn, Like, NotLike, NotNull, IsNull };

// The operator's spelling on the wire ("=", "not in", ...).
std::string_view op_name(Op op);
// Parse an operator spelling; returns false if unknown.
bool parse_op(std::string_view text, Op& out);
// True for `in` / `not in` (value is an array).
bool op_takes_array(Op op);
// True for `is null` / `not null` (no value).
bool op_takes_no_value(Op op);

// A scalar value: null, bool, integer, real or string.
using Scalar = std::variant<std::monostate, bool, std::int64_t, double, std::string>;

struct Condition {
    std::string field;
    Op op = Op::Eq;
    std::vector<Scalar> values;  // one element for scalar ops, any number for in/not in, none for null ops

    bool operator==(const Condition& o) const { return field == o.field && op == o.op && values == o.values; }
};

// Bounds on the `json` parameter (documented in docs/conditions.md).
inline constexpr std::size_t kMaxJsonLength = 8192;   // bytes of the decoded parameter
inline constexpr std::size_t kMaxConditions = 32;
inline constexpr std::size_t kMaxArrayValues = 500;   // elements of an in/not in array

// Every error names the problem.  `position` is the byte offset in the JSON
// text for parse errors (npos otherwise); `field` and `op` are filled when the
// error concerns one condition.
class QueryError : public std::invalid_argument {
public:
    QueryError(const std::string& message, std::size_t position = npos, std::string field = {}, std::string op = {})
        : std::invalid_argument(message), position(position), field(std::move(field)), op(std::move(op)) {}
    static constexpr std::size_t npos = static_cast<std::size_t>(-1);
    std::size_t position;
    std::string field;
    std::string op;
};

// "condition 2 (field "year", op ">=")": the prefix of every per-condition
// message.  `index` is 0-based and printed 1-based; a null field or op is left
// out; user text is JSON-quoted and cut to 64 bytes.  For front ends (the
// Python bindings) that build conditions from other inputs.
std::string condition_label(std::size_t index, const std::string* field, const std::string* op);

// Throws "json has more than 32 conditions" when `count` exceeds kMaxConditions.
void check_count(std::size_t count, std::size_t position = QueryError::npos);

// The kind of value a front end found, as messages name it ("got a string").
// Other: a value of no JSON kind (a Python object); messages use its type name.
enum class Kind { Null, Boolean, Number, String, Array, Object, Other };

// The shape rules of one condition object, written once: the JSON parser and
// the Python bindings feed it the members they read, in their order, and it
// throws QueryError naming every problem (messages: docs/conditions.md).
// Problems in "val" are reported once "field" and "op" are checked, so a
// message can name them.  `position` arguments are byte offsets in JSON text,
// npos for front ends without text.
class ConditionReader {
public:
    enum class Member { Field, Op, Val };
    // `index` is the condition's 0-based place in its list; `position` where its object starts.
    explicit ConditionReader(std::size_t index, std::size_t position = QueryError::npos);
    // A member's key; throws for a duplicate or an unknown key.
    Member key(std::string_view key, std::size_t position = QueryError::npos);
    // The value of "field" or "op": its text when `kind` is String, else throws.
    // `type_name` names an Other kind.
    void text(Member member, Kind kind, std::string_view text, std::size_t position = QueryError::npos,
              std::string_view type_name = {});
    // "val" is one scalar.
    void scalar(Scalar value, std::size_t position = QueryError::npos);
    // "val" is an array: begin_array(), then element() or bad_element() for each element in order.
    void begin_array(std::size_t position = QueryError::npos);
    void element(Scalar value, std::size_t position = QueryError::npos);
    // An element that is no scalar (an array, an object, or an Other value).
    void bad_element(Kind kind, std::size_t position = QueryError::npos, std::string_view type_name = {});
    // "val" itself is an object or an Other value.
    void bad_val(Kind kind, std::size_t position = QueryError::npos, std::string_view type_name = {});
    // An integer outside the 64-bit range (the val, or the current array element).
    void out_of_range(std::size_t position = QueryError::npos);
    // Apply the remaining rules and return the condition.
    Condition finish();
    // A list item that is no condition object: throws naming its kind.
    [[noreturn]] static void not_an_object(std::size_t index, Kind kind, std::size_t position = QueryError::npos,
                                           std::string_view type_name = {});

private:
    [[noreturn]] void reject(const std::string& reason, std::size_t position) const;
    void defer(std::string reason, std::size_t position);
    std::size_t index_, position_;
    bool has_field_ = false, has_op_ = false, has_val_ = false, val_array_ = false;
    std::string field_, op_;
    std::string val_kind_;       // what "val" was, for messages
    std::size_t val_position_ = QueryError::npos;
    std::size_t elements_ = 0;
    std::vector<Scalar> values_;
    std::string val_error_;      // the first problem inside "val", reported by finish()
    std::size_t val_error_position_ = QueryError::npos;
};

// Parse the JSON text of the `json` parameter (an array of condition objects).
// Throws QueryError with a position and reason.
std::vector<Condition> parse(std::string_view json_text);

// Check every condition against an endpoint's json fields and each field's
// type (numbers for numeric fields, strings for string fields, values of an
// enumeration where the schema has one is NOT enforced: the service accepts
// any value and simply matches nothing).  Throws QueryError naming the field,
// the operator and the reason.
void validate(const std::vector<Condition>& conditions, const schema::Endpoint& endpoint);

// validate() and return the conditions with each value converted to its
// field's type: numeric strings become numbers for numeric fields ("2018" ->
// 2018), integers become text for string fields (911 -> "911").  Leniency
// rules and messages: docs/conditions.md.
std::vector<Condition> normalize(const std::vector<Condition>& conditions, const schema::Endpoint& endpoint);

// Encode conditions to the exact `json` parameter text (before URL encoding):
// [{"field":"year","op":">=","val":2018}] ; no "val" member for is null/not null.
// encode(parse(encode(c))) == encode(c).
std::string encode(const std::vector<Condition>& conditions);
// normalize() against `endpoint`, then encode(): the text a search sends.
std::string encode(const std::vector<Condition>& conditions, const schema::Endpoint& endpoint);

// A WHERE fragment with `?` placeholders and its bound parameters in order.
struct SqlFragment {
    std::string sql;              // "" when there are no conditions
    std::vector<Scalar> params;
};

// Translate conditions to SQL on the endpoint's table (normalize() first, so
// it throws QueryError on invalid input).  Conditions are joined with AND and
// hold no OR, so the fragment may be ANDed with other predicates as is.
// Column and table names come only from the schema table.  Dotted
// related fields become `id IN (SELECT key FROM related WHERE ...)`
// (schema::related_predicate); with demo = true those related rows are limited
// to the related table's demo data-set.  LIKE is case-insensitive (as on the
// MySQL-backed service) with no escape character (the caller's % and _ are
// wildcards, as on the service).
SqlFragment to_sql(const std::vector<Condition>& conditions, const schema::Endpoint& endpoint, bool demo = false);

}  // namespace vehicledata::query
