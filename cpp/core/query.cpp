// Conditions of the `json` query parameter: model, parser (simdjson On-Demand),
// validation against the schema table, encoder and SQL translation.
//
// Messages are part of the interface: the emulator returns them verbatim in
// 400 bodies and tests compare them.  Their shapes are listed in
// docs/conditions.md; change both together.
#include "vehicledata/query.h"
#include "vehicledata/charconv.h"
#include "vehicledata/format.h"

#include <simdjson.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>

namespace vehicledata::query {

namespace {

namespace od = simdjson::ondemand;

constexpr std::string_view kOpNames[] = {"=",  "!=",     ">",    "<",        ">=",       "<=",
                                         "in", "not in", "like", "not like", "not null", "is null"};
constexpr std::string_view kOpList = "=, !=, >, <, >=, <=, in, not in, like, not like, not null, is null";
constexpr std::size_t kQuoteMax = 64;   // bytes of user text quoted in a message
constexpr std::size_t kMaxDepth = 32;   // nesting accepted before the parser gives up

// ---- message helpers -----------------------------------------------------------------
// A JSON string literal (the `json` parameter, user text in messages): format's plain escaping.
void append_json_string(std::string& out, std::string_view s) {
    format::append_json_string(out, s, format::JsonEscape::Plain);
}

// User text in a message: JSON-quoted, cut to kQuoteMax bytes on a character boundary.
std::string quote(std::string_view s) {
    std::string out;
    if (s.size() <= kQuoteMax) {
        append_json_string(out, s);
        return out;
    }
    std::size_t cut = kQuoteMax;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
    append_json_string(out, s.substr(0, cut));
    out.insert(out.size() - 1, "...");
    return out;
}

// "condition 2 (field "year", op ">=")": 1-based index and what is known so far.
std::string context(std::size_t index, const std::string* field, const std::string* op) {
    std::string out = "condition " + std::to_string(index + 1);
    if (field || op) {
        out += " (";
        if (field) out += "field " + quote(*field);
        if (field && op) out += ", ";
        if (op) out += "op " + quote(*op);
        out += ')';
    }
    return out;
}

[[noreturn]] void fail(std::string message, std::size_t position = QueryError::npos, std::string field = {},
                       std::string op = {}) {
    if (position != QueryError::npos) message += " (at byte " + std::to_string(position) + ")";
    throw QueryError(message, position, std::move(field), std::move(op));
}

std::string val_name(bool array, std::size_t k) { return array ? "val[" + std::to_string(k) + "]" : "val"; }

// ---- pre-scan: strings and brackets ---------------------------------------------------
// simdjson reports unclosed strings, unbalanced brackets and trailing content
// without a position; this scan finds them first, with one.
struct ScanError {
    std::size_t position;
    std::string reason;
};

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::optional<ScanError> prescan(std::string_view t) {
    std::string stack;
    std::size_t string_start = 0;
    bool in_string = false, closed = false;
    for (std::size_t i = 0; i < t.size(); ++i) {
        char c = t[i];
        if (in_string) {
            if (c == '\\') { ++i; continue; }
            if (c == '"') in_string = false;
            else if (static_cast<unsigned char>(c) < 0x20) return ScanError{i, "control character in a string (escape it)"};
            continue;
        }
        if (is_ws(c)) continue;
        if (closed) return ScanError{i, "unexpected content after the array"};
        switch (c) {
            case '"': in_string = true; string_start = i; break;
            case '[': case '{':
                stack += c;
                if (stack.size() > kMaxDepth) return ScanError{i, "nested too deeply"};
                break;
            case ']': case '}': {
                char open = c == ']' ? '[' : '{';
                if (stack.empty() || stack.back() != open) return ScanError{i, std::string("unexpected '") + c + "'"};
                stack.pop_back();
                if (stack.empty()) closed = true;
                break;
            }
            default: break;
        }
    }
    if (in_string) return ScanError{string_start, "unclosed string"};
    if (!stack.empty()) return ScanError{t.size(), std::string("unexpected end of text, missing '") + (stack.back() == '[' ? ']' : '}') + "'"};
    return std::nullopt;
}

// How messages name a kind: "a string", "an array"; an Other kind by its type name.
std::string kind_word(Kind kind, std::string_view type_name = {}) {
    switch (kind) {
        case Kind::Array: return "an array";
        case Kind::Object: return "an object";
        case Kind::Number: return "a number";
        case Kind::String: return "a string";
        case Kind::Boolean: return "a boolean";
        case Kind::Null: return "null";
        case Kind::Other: break;
    }
    return type_name.empty() ? "a value" : std::string(type_name);
}

Kind kind_of(const Scalar& v) {
    if (std::holds_alternative<std::monostate>(v)) return Kind::Null;
    if (std::holds_alternative<bool>(v)) return Kind::Boolean;
    if (std::holds_alternative<std::string>(v)) return Kind::String;
    return Kind::Number;
}

Kind kind_of(od::json_type t) {
    switch (t) {
        case od::json_type::array: return Kind::Array;
        case od::json_type::object: return Kind::Object;
        case od::json_type::number: return Kind::Number;
        case od::json_type::string: return Kind::String;
        case od::json_type::boolean: return Kind::Boolean;
        case od::json_type::null: return Kind::Null;
    }
    return Kind::Other;
}

std::string kind_name(od::json_type t) { return kind_word(kind_of(t)); }

// True when `s` (a whole token) follows the JSON number grammar.
bool json_number_syntax(std::string_view s) {
    std::size_t i = 0, n = s.size();
    if (i < n && s[i] == '-') ++i;
    if (i >= n) return false;
    if (s[i] == '0') ++i;
    else if (s[i] >= '1' && s[i] <= '9') { while (i < n && s[i] >= '0' && s[i] <= '9') ++i; }
    else return false;
    if (i < n && s[i] == '.') {
        ++i;
        std::size_t d = i;
        while (i < n && s[i] >= '0' && s[i] <= '9') ++i;
        if (i == d) return false;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
        std::size_t d = i;
        while (i < n && s[i] >= '0' && s[i] <= '9') ++i;
        if (i == d) return false;
    }
    return i == n;
}

// A number written as text ("2018", "-1.5e3") -> int64 or finite double.
std::optional<Scalar> number_from_text(std::string_view s) {
    if (!json_number_syntax(s)) return std::nullopt;
    bool integral = s.find_first_of(".eE") == std::string_view::npos;
    if (integral) {
        std::int64_t v = 0;
        auto r = std::from_chars(s.data(), s.data() + s.size(), v);
        if (r.ec == std::errc() && r.ptr == s.data() + s.size()) return Scalar(v);
    }
    double d = 0;
    auto r = charconv::from_chars(s.data(), s.data() + s.size(), d);
    if (r.ec != std::errc() || r.ptr != s.data() + s.size() || !std::isfinite(d)) return std::nullopt;
    return Scalar(d);
}

// ---- the parser -------------------------------------------------------------------------
class Parser {
public:
    explicit Parser(std::string_view text) : text_(text), buf_(text), base_(buf_.data()) {}

    std::vector<Condition> run() {
        static thread_local od::parser parser;
        od::document doc;
        if (auto err = parser.iterate(buf_).get(doc)) syntax(err, 0);
        doc_ = &doc;
        od::json_type top;
        if (auto err = doc.type().get(top)) syntax(err, first_token());
        if (top != od::json_type::array) {
            // Name the kind only when the text really is one (so "nope" is not "null").
            std::string_view rest = text_.substr(first_token());
            while (!rest.empty() && is_ws(rest.back())) rest.remove_suffix(1);
            if (top == od::json_type::number && !json_number_syntax(rest)) syntax_at(simdjson::NUMBER_ERROR, first_token());
            if ((top == od::json_type::null && rest != "null") ||
                (top == od::json_type::boolean && rest != "true" && rest != "false"))
                syntax_at(simdjson::N_ATOM_ERROR, first_token());
            fail("json must be an array of conditions, got " + kind_name(top), first_token());
        }
        od::array arr;
        if (auto err = doc.get_array().get(arr)) syntax(err, first_token());
        std::vector<Condition> out;
        for (auto item : arr) {
            od::value el;
            if (auto err = item.get(el)) syntax(err, here(first_token()));
            std::size_t index = out.size();
            std::size_t pos = where(el);
            check_count(index + 1, pos);
            out.push_back(condition(el, index, pos));
        }
        return out;
    }

private:
    std::size_t where(od::value& v) { return static_cast<std::size_t>(v.raw_json_token().data() - base_); }
    std::size_t first_token() const {
        std::size_t i = 0;
        while (i < text_.size() && is_ws(text_[i])) ++i;
        return i;
    }
    std::size_t here(std::size_t fallback) {
        const char* loc = nullptr;
        if (doc_ && !doc_->current_location().get(loc) && loc >= base_ && loc <= base_ + text_.size())
            return static_cast<std::size_t>(loc - base_);
        return fallback;
    }

    // A simdjson error at the parser's current location (or `fallback`).
    [[noreturn]] void syntax(simdjson::error_code err, std::size_t fallback) { syntax_at(err, here(fallback)); }

    // A simdjson error at a known position.
    [[noreturn]] void syntax_at(simdjson::error_code err, std::size_t position) {
        std::string reason;
        switch (err) {
            case simdjson::EMPTY: fail("json is empty; expected an array of conditions", 0);
            case simdjson::NUMBER_ERROR: reason = "invalid number"; break;
            case simdjson::STRING_ERROR: reason = "invalid string escape"; break;
            case simdjson::UNCLOSED_STRING: reason = "unclosed string"; break;
            case simdjson::UNESCAPED_CHARS: reason = "control character in a string (escape it)"; break;
            case simdjson::UTF8_ERROR: reason = "invalid UTF-8"; break;
            case simdjson::T_ATOM_ERROR: case simdjson::F_ATOM_ERROR: case simdjson::N_ATOM_ERROR:
                reason = "invalid literal (expected true, false or null)"; break;
            case simdjson::DEPTH_ERROR: reason = "nested too deeply"; break;
            default: reason = "malformed JSON (check commas, colons, quotes and brackets)"; break;
        }
        fail("json is not valid JSON: " + reason, position);
    }

    // One scalar of JSON type t (not an array or object) at byte `pos`.
    Scalar scalar(od::value& v, od::json_type t, std::size_t pos) {
        switch (t) {
            case od::json_type::null: {
                bool is_null = false;
                if (v.is_null().get(is_null) || !is_null) syntax_at(simdjson::N_ATOM_ERROR, pos);
                return Scalar{};
            }
            case od::json_type::boolean: {
                bool b = false;
                if (v.get_bool().get(b)) syntax_at(simdjson::T_ATOM_ERROR, pos);
                return Scalar(b);
            }
            case od::json_type::number: {
                od::number num;
                if (v.get_number().get(num)) {
                    std::string_view raw = v.raw_json_token();
                    while (!raw.empty() && is_ws(raw.back())) raw.remove_suffix(1);
                    if (json_number_syntax(raw)) fail("json is not valid JSON: number out of range", pos);
                    syntax_at(simdjson::NUMBER_ERROR, pos);
                }
                switch (num.get_number_type()) {
                    case od::number_type::signed_integer: return Scalar(num.get_int64());
                    case od::number_type::unsigned_integer: return Scalar(static_cast<double>(num.get_uint64()));
                    default: return Scalar(num.get_double());
                }
            }
            case od::json_type::string: {
                std::string_view s;
                if (v.get_string().get(s)) syntax_at(simdjson::STRING_ERROR, pos);
                if (format::invalid_utf8_at(s) != std::string_view::npos)
                    fail("json is not valid JSON: invalid string escape (unpaired surrogate)", pos);
                return Scalar(std::string(s));
            }
            default: break;
        }
        return Scalar{};
    }

    od::json_type type_of(od::value& v, std::size_t pos) {
        od::json_type t;
        if (auto err = v.type().get(t)) syntax(err, pos);
        return t;
    }

    void read_val(od::value& v, ConditionReader& reader) {
        const std::size_t pos = where(v);
        od::json_type t = type_of(v, pos);
        if (t == od::json_type::object) return reader.bad_val(Kind::Object, pos);  // skipped by the iterator
        if (t != od::json_type::array) return reader.scalar(scalar(v, t, pos), pos);
        reader.begin_array(pos);
        od::array arr;
        if (auto err = v.get_array().get(arr)) syntax(err, pos);
        for (auto item : arr) {
            od::value el;
            if (auto err = item.get(el)) syntax(err, here(pos));
            const std::size_t at = where(el);
            od::json_type et = type_of(el, at);
            if (et == od::json_type::array || et == od::json_type::object) reader.bad_element(kind_of(et), at);
            else reader.element(scalar(el, et, at), at);
        }
    }

    // The members go to a ConditionReader, which holds every shape rule.
    Condition condition(od::value& el, std::size_t index, std::size_t pos) {
        od::json_type t = type_of(el, pos);
        if (t != od::json_type::object) ConditionReader::not_an_object(index, kind_of(t), pos);
        od::object obj;
        if (auto err = el.get_object().get(obj)) syntax(err, pos);
        ConditionReader reader(index, pos);
        for (auto member : obj) {
            od::field f;
            if (auto err = std::move(member).get(f)) syntax(err, here(pos));
            std::string_view key_view;
            if (auto err = f.unescaped_key().get(key_view)) syntax(err, here(pos));
            od::value v = f.value();
            const std::size_t at = where(v);
            const ConditionReader::Member m = reader.key(key_view, at);
            if (m == ConditionReader::Member::Val) {
                read_val(v, reader);
                continue;
            }
            od::json_type vt = type_of(v, at);
            if (vt != od::json_type::string) reader.text(m, kind_of(vt), {}, at);
            Scalar s = scalar(v, vt, at);
            reader.text(m, Kind::String, std::get<std::string>(s), at);
        }
        return reader.finish();
    }

    std::string_view text_;
    simdjson::padded_string buf_;
    const char* base_;
    od::document* doc_ = nullptr;
};

// ---- shape rules shared by the reader, encode and normalize ------------------------------
using Bad = std::function<void(const std::string&)>;

std::string op_string(Op op) { return std::string(op_name(op)); }

std::string too_many_values() { return "val has more than " + std::to_string(kMaxArrayValues) + " values"; }

void check_field(const std::string& field, const Bad& bad) {
    if (field.empty()) bad("\"field\" must not be empty");
    if (format::invalid_utf8_at(field) != std::string_view::npos) bad("\"field\" is not valid UTF-8");
}

// The values of an operator that takes some: how many, and each one finite and valid UTF-8.
void check_values(Op op, const std::vector<Scalar>& values, const Bad& bad) {
    const bool array = op_takes_array(op);
    if (array) {
        if (values.empty()) bad("val must not be an empty array");
        if (values.size() > kMaxArrayValues) bad(too_many_values());
    } else if (values.size() != 1) {
        bad("val must be a single value, got " + std::to_string(values.size()));
    }
    for (std::size_t k = 0; k < values.size(); ++k) {
        const Scalar& v = values[k];
        if (auto d = std::get_if<double>(&v); d && !std::isfinite(*d))
            bad(val_name(array, k) + " must be a finite number");
        if (auto s = std::get_if<std::string>(&v); s && format::invalid_utf8_at(*s) != std::string_view::npos)
            bad(val_name(array, k) + " is not valid UTF-8");
        // SQLite reads a LIKE pattern as a C string: a NUL would cut it ("SUV\u0000zzz" as "SUV").
        // Other operators compare the bound text by its length: there a NUL is an ordinary character.
        if (auto s = std::get_if<std::string>(&v);
            s && (op == Op::Like || op == Op::NotLike) && s->find('\0') != std::string::npos)
            bad(val_name(array, k) + " must not contain a NUL character (\\u0000) in a LIKE pattern");
    }
}

// A Condition built in C++ (no reader): the same rules.
void check_shape(const Condition& c, std::size_t index) {
    const std::string op = op_string(c.op);
    const Bad bad = [&](const std::string& reason) {
        throw QueryError(context(index, &c.field, &op) + ": " + reason, QueryError::npos, c.field, op);
    };
    check_field(c.field, bad);
    if (op_takes_no_value(c.op)) {
        if (!c.values.empty()) bad("takes no val");
        return;
    }
    check_values(c.op, c.values, bad);
}

void append_double(std::string& out, double d) {
    char buf[64];
    auto r = charconv::to_chars(buf, buf + sizeof buf, d);
    std::string_view s(buf, static_cast<std::size_t>(r.ptr - buf));
    out += s;
    // keep the value a real number on the way back: 2.0, not 2
    if (s.find_first_of(".eE") == std::string_view::npos) out += ".0";
}

void append_scalar(std::string& out, const Scalar& v) {
    if (std::holds_alternative<std::monostate>(v)) out += "null";
    else if (auto b = std::get_if<bool>(&v)) out += *b ? "true" : "false";
    else if (auto i = std::get_if<std::int64_t>(&v)) out += std::to_string(*i);
    else if (auto d = std::get_if<double>(&v)) append_double(out, *d);
    else append_json_string(out, std::get<std::string>(v));
}

// ---- typed conversion -----------------------------------------------------------------
bool numeric(schema::Type t) {
    return t == schema::Type::Int || t == schema::Type::Int64 || t == schema::Type::Decimal ||
           t == schema::Type::Float;
}

std::string_view type_word(schema::Type t) {
    switch (t) {
        case schema::Type::Int: case schema::Type::Int64: return "integer";
        case schema::Type::Decimal: return "decimal";
        case schema::Type::Float: return "numeric";
        case schema::Type::Timestamp: return "timestamp";
        case schema::Type::Date: return "date";
        case schema::Type::Bool: return "boolean";
        default: return "string";
    }
}

// Returns the value converted to the field's type; throws naming the problem.
Scalar convert(const Scalar& v, const schema::JsonField& jf, Op op, const std::string& what,
               const std::function<void(const std::string&)>& bad) {
    if (std::holds_alternative<std::monostate>(v))
        bad(what + " must not be null; use op \"is null\" or \"not null\"");
    if (op == Op::Like || op == Op::NotLike) {
        if (!std::holds_alternative<std::string>(v)) bad(what + " must be a string (a LIKE pattern)");
        return v;
    }
    const std::string field_desc = std::string(type_word(jf.type)) + " field " + jf.name;
    if (numeric(jf.type)) {
        if (std::holds_alternative<std::int64_t>(v) || std::holds_alternative<double>(v)) return v;
        if (auto s = std::get_if<std::string>(&v))
            if (auto n = number_from_text(*s)) return *n;
        bad(what + " must be a number for " + field_desc);
    }
    if (jf.type == schema::Type::Bool) {
        if (std::holds_alternative<bool>(v)) return v;
        if (auto i = std::get_if<std::int64_t>(&v); i && (*i == 0 || *i == 1)) return Scalar(*i == 1);
        bad(what + " must be true or false for " + field_desc);
    }
    if (std::holds_alternative<std::string>(v)) return v;
    if (jf.type == schema::Type::String)
        if (auto i = std::get_if<std::int64_t>(&v)) return Scalar(std::to_string(*i));
    bad(what + " must be a string for " + field_desc);
    return v;
}

// Text equality is case-insensitive, as on the MySQL-backed service (SQLite's
// NOCASE folds ASCII); ordering comparisons and LIKE keep their own rules.
std::string comparison(const std::string& column_expr, Op op, std::size_t n, bool text) {
    const bool fold = text && (op == Op::Eq || op == Op::Ne || op == Op::In || op == Op::NotIn);
    const std::string column = fold ? column_expr + " COLLATE NOCASE" : column_expr;
    switch (op) {
        case Op::Eq: return column + " = ?";
        case Op::Ne: return column + " != ?";
        case Op::Gt: return column + " > ?";
        case Op::Lt: return column + " < ?";
        case Op::Ge: return column + " >= ?";
        case Op::Le: return column + " <= ?";
        case Op::Like: return column + " LIKE ?";
        case Op::NotLike: return column + " NOT LIKE ?";
        case Op::IsNull: return column + " IS NULL";
        case Op::NotNull: return column + " IS NOT NULL";
        case Op::In: case Op::NotIn: {
            std::string s = column + (op == Op::In ? " IN (" : " NOT IN (");
            for (std::size_t k = 0; k < n; ++k) s += k ? ", ?" : "?";
            return s + ")";
        }
    }
    return column;
}

}  // namespace

std::string_view op_name(Op op) { return kOpNames[static_cast<int>(op)]; }

std::string condition_label(std::size_t index, const std::string* field, const std::string* op) {
    return context(index, field, op);
}

bool parse_op(std::string_view text, Op& out) {
    for (std::size_t i = 0; i < std::size(kOpNames); ++i) {
        std::string_view name = kOpNames[i];
        if (name.size() != text.size()) continue;
        bool same = true;
        for (std::size_t k = 0; k < name.size() && same; ++k) {
            char c = text[k];
            if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
            same = c == name[k];
        }
        if (same) {
            out = static_cast<Op>(i);
            return true;
        }
    }
    return false;
}

bool op_takes_array(Op op) { return op == Op::In || op == Op::NotIn; }
bool op_takes_no_value(Op op) { return op == Op::IsNull || op == Op::NotNull; }

void check_count(std::size_t count, std::size_t position) {
    if (count > kMaxConditions) fail("json has more than " + std::to_string(kMaxConditions) + " conditions", position);
}

// ---- ConditionReader: the shape rules of one condition -----------------------------------
ConditionReader::ConditionReader(std::size_t index, std::size_t position) : index_(index), position_(position) {}

void ConditionReader::reject(const std::string& reason, std::size_t position) const {
    fail(context(index_, has_field_ ? &field_ : nullptr, has_op_ ? &op_ : nullptr) + ": " + reason, position,
         field_, op_);
}

void ConditionReader::not_an_object(std::size_t index, Kind kind, std::size_t position, std::string_view type_name) {
    fail(context(index, nullptr, nullptr) + " must be an object {\"field\", \"op\", \"val\"}, got " +
             kind_word(kind, type_name),
         position);
}

void ConditionReader::defer(std::string reason, std::size_t position) {
    if (!val_error_.empty()) return;
    val_error_ = std::move(reason);
    val_error_position_ = position;
}

ConditionReader::Member ConditionReader::key(std::string_view key, std::size_t position) {
    Member m;
    bool seen;
    if (key == "field") m = Member::Field, seen = has_field_;
    else if (key == "op") m = Member::Op, seen = has_op_;
    else if (key == "val") m = Member::Val, seen = has_val_;
    else reject("unknown member " + quote(key) + "; expected field, op, val", position);
    if (seen) reject("duplicate member " + quote(key), position);
    return m;
}

void ConditionReader::text(Member member, Kind kind, std::string_view text, std::size_t position,
                           std::string_view type_name) {
    const bool is_field = member == Member::Field;
    if (kind != Kind::String)
        reject(std::string(is_field ? "\"field\"" : "\"op\"") + " must be a string, got " + kind_word(kind, type_name),
               position);
    (is_field ? field_ : op_) = std::string(text);
    (is_field ? has_field_ : has_op_) = true;
}

void ConditionReader::scalar(Scalar value, std::size_t position) {
    has_val_ = true;
    val_kind_ = kind_word(kind_of(value));
    val_position_ = position;
    values_.push_back(std::move(value));
}

void ConditionReader::begin_array(std::size_t position) {
    has_val_ = val_array_ = true;
    val_kind_ = kind_word(Kind::Array);
    val_position_ = position;
}

void ConditionReader::element(Scalar value, std::size_t position) {
    if (elements_++ >= kMaxArrayValues) return defer(too_many_values(), position);
    values_.push_back(std::move(value));
}

void ConditionReader::bad_element(Kind kind, std::size_t position, std::string_view type_name) {
    if (elements_ >= kMaxArrayValues) defer(too_many_values(), position);
    defer(val_name(true, elements_++) + " must be a scalar (string, number, true, false or null), got " +
              kind_word(kind, type_name),
          position);
}

void ConditionReader::bad_val(Kind kind, std::size_t position, std::string_view type_name) {
    has_val_ = true;
    val_kind_ = kind_word(kind, type_name);
    val_position_ = position;
    defer("val must be a scalar or an array of scalars, got " + val_kind_, position);
}

void ConditionReader::out_of_range(std::size_t position) {
    if (val_array_) {
        defer(val_name(true, elements_++) + " is out of the 64-bit integer range", position);
        return;
    }
    has_val_ = true;
    val_kind_ = kind_word(Kind::Number);
    val_position_ = position;
    defer("val is out of the 64-bit integer range", position);
}

Condition ConditionReader::finish() {
    if (!has_field_) reject("missing \"field\"", position_);
    check_field(field_, [&](const std::string& reason) { reject(reason, position_); });
    if (!has_op_) reject("missing \"op\"", position_);
    Condition c;
    c.field = field_;
    if (!parse_op(op_, c.op)) reject("unknown op; expected one of " + std::string(kOpList), position_);
    if (!val_error_.empty()) reject(val_error_, val_error_position_);
    if (op_takes_no_value(c.op)) {
        const bool null_val = has_val_ && !val_array_ && kind_of(values_.at(0)) == Kind::Null;
        if (has_val_ && !null_val) reject("val must be absent or null, got " + val_kind_, val_position_);
        return c;
    }
    if (!has_val_) reject("missing \"val\"", position_);
    if (op_takes_array(c.op)) {
        if (!val_array_) reject("val must be an array of values, got " + val_kind_, val_position_);
    } else if (val_array_) {
        reject("val must be a single value, got an array (use op \"in\" for a list)", val_position_);
    }
    c.values = std::move(values_);
    check_values(c.op, c.values, [&](const std::string& reason) { reject(reason, val_position_); });
    return c;
}

std::vector<Condition> parse(std::string_view json_text) {
    if (json_text.size() > kMaxJsonLength)
        fail("json is " + std::to_string(json_text.size()) + " bytes, longer than the maximum of " +
                 std::to_string(kMaxJsonLength),
             kMaxJsonLength);
    if (std::size_t bad = format::invalid_utf8_at(json_text); bad != std::string_view::npos)
        fail("json is not valid UTF-8", bad);
    std::size_t first = 0;
    while (first < json_text.size() && is_ws(json_text[first])) ++first;
    if (first == json_text.size()) fail("json is empty; expected an array of conditions", 0);
    if (auto e = prescan(json_text)) fail("json is not valid JSON: " + e->reason, e->position);
    return Parser(json_text).run();
}

std::vector<Condition> normalize(const std::vector<Condition>& conditions, const schema::Endpoint& endpoint) {
    if (!endpoint.accepts_json()) throw QueryError(endpoint.path + " does not accept the json parameter");
    check_count(conditions.size());
    std::vector<Condition> out;
    out.reserve(conditions.size());
    for (std::size_t i = 0; i < conditions.size(); ++i) {
        const Condition& c = conditions[i];
        check_shape(c, i);
        const std::string op = op_string(c.op);
        std::function<void(const std::string&)> bad = [&](const std::string& reason) {
            throw QueryError(context(i, &c.field, &op) + ": " + reason, QueryError::npos, c.field, op);
        };
        const schema::JsonField* jf = endpoint.json_field(c.field);
        if (!jf) bad("unknown json field " + quote(c.field) + " for " + endpoint.path);
        Condition n;
        n.field = c.field;
        n.op = c.op;
        const bool array = op_takes_array(c.op);
        for (std::size_t k = 0; k < c.values.size(); ++k)
            n.values.push_back(convert(c.values[k], *jf, c.op, val_name(array, k), bad));
        out.push_back(std::move(n));
    }
    return out;
}

void validate(const std::vector<Condition>& conditions, const schema::Endpoint& endpoint) {
    (void)normalize(conditions, endpoint);
}

std::string encode(const std::vector<Condition>& conditions) {
    check_count(conditions.size());
    std::string out = "[";
    for (std::size_t i = 0; i < conditions.size(); ++i) {
        const Condition& c = conditions[i];
        check_shape(c, i);
        if (i) out += ',';
        out += "{\"field\":";
        append_json_string(out, c.field);
        out += ",\"op\":\"";
        out += op_name(c.op);
        out += '"';
        if (!op_takes_no_value(c.op)) {
            out += ",\"val\":";
            if (op_takes_array(c.op)) {
                out += '[';
                for (std::size_t k = 0; k < c.values.size(); ++k) {
                    if (k) out += ',';
                    append_scalar(out, c.values[k]);
                }
                out += ']';
            } else {
                append_scalar(out, c.values.front());
            }
        }
        out += '}';
    }
    out += ']';
    if (out.size() > kMaxJsonLength)
        throw QueryError("json is " + std::to_string(out.size()) + " bytes, longer than the maximum of " +
                         std::to_string(kMaxJsonLength));
    return out;
}

std::string encode(const std::vector<Condition>& conditions, const schema::Endpoint& endpoint) {
    return encode(normalize(conditions, endpoint));
}

SqlFragment to_sql(const std::vector<Condition>& conditions, const schema::Endpoint& endpoint, bool demo) {
    SqlFragment f;
    for (const Condition& c : normalize(conditions, endpoint)) {
        const schema::JsonField* jf = endpoint.json_field(c.field);  // non-null after normalize
        std::string pred = comparison(jf->column, c.op, c.values.size(), jf->type == schema::Type::String);
        if (!jf->related_table.empty())
            pred = schema::related_predicate(jf->related_table, jf->related_key, pred, demo);
        if (!f.sql.empty()) f.sql += " AND ";
        f.sql += pred;
        for (const Scalar& v : c.values) f.params.push_back(v);
    }
    return f;
}

}  // namespace vehicledata::query
