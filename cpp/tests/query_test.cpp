// Conditions: parse, validate/normalize, encode, to_sql.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "vehicledata/query.h"
#include "vehicledata/schema.h"

namespace q = vehicledata::query;
namespace sc = vehicledata::schema;

namespace {

using Scalars = std::vector<q::Scalar>;

q::Condition C(std::string field, q::Op op, Scalars values = {}) {
    q::Condition c;
    c.field = std::move(field);
    c.op = op;
    c.values = std::move(values);
    return c;
}

const sc::Endpoint& EP(const char* path) {
    const sc::Endpoint* e = sc::find_endpoint(path);
    if (!e) throw std::runtime_error(std::string("no endpoint ") + path);
    return *e;
}

struct Caught {
    std::string message;
    std::size_t position = q::QueryError::npos;
    std::string field, op;
};

template <class F>
Caught catch_query_error(F&& f) {
    try {
        f();
    } catch (const q::QueryError& e) {
        return Caught{e.what(), e.position, e.field, e.op};
    }
    return Caught{"<no error>"};
}

Caught parse_error(const std::string& text) {
    return catch_query_error([&] { (void)q::parse(text); });
}

std::size_t count_of(const std::string& s, char c) {
    std::size_t n = 0;
    for (char x : s) n += x == c;
    return n;
}

const std::vector<std::pair<std::string, q::Op>> kAllOps = {
    {"=", q::Op::Eq},      {"!=", q::Op::Ne},          {">", q::Op::Gt},        {"<", q::Op::Lt},
    {">=", q::Op::Ge},     {"<=", q::Op::Le},          {"in", q::Op::In},       {"not in", q::Op::NotIn},
    {"like", q::Op::Like}, {"not like", q::Op::NotLike}, {"not null", q::Op::NotNull}, {"is null", q::Op::IsNull},
};

}  // namespace

// ---- operators -------------------------------------------------------------------------------

TEST(QueryOps, EveryOperatorSpellingRoundTrips) {
    ASSERT_EQ(kAllOps.size(), 12u);
    for (const auto& [name, op] : kAllOps) {
        EXPECT_EQ(q::op_name(op), name);
        q::Op parsed = q::Op::Eq;
        ASSERT_TRUE(q::parse_op(name, parsed)) << name;
        EXPECT_EQ(parsed, op) << name;
        EXPECT_EQ(q::op_takes_array(op), name == "in" || name == "not in") << name;
        EXPECT_EQ(q::op_takes_no_value(op), name == "is null" || name == "not null") << name;
    }
}

TEST(QueryOps, SpellingIsCaseInsensitiveButOtherwiseExact) {
    q::Op op = q::Op::Eq;
    EXPECT_TRUE(q::parse_op("NOT IN", op));
    EXPECT_EQ(op, q::Op::NotIn);
    EXPECT_TRUE(q::parse_op("Like", op));
    EXPECT_EQ(op, q::Op::Like);
    for (const char* bad : {"==", "<>", "is not null", "notin", "not  in", " in", "in ", "", "lik", "=>"})
        EXPECT_FALSE(q::parse_op(bad, op)) << bad;
}

// ---- parse -----------------------------------------------------------------------------------

TEST(QueryParse, EveryOperator) {
    const std::string text =
        R"([{"field":"year","op":"=","val":2019},{"field":"year","op":"!=","val":2016},)"
        R"({"field":"year","op":">","val":2015},{"field":"year","op":"<","val":2021},)"
        R"({"field":"msrp","op":">=","val":10000.5},{"field":"msrp","op":"<=","val":"90000"},)"
        R"({"field":"make","op":"in","val":["BMW","Audi"]},{"field":"make","op":"not in","val":["Kia"]},)"
        R"({"field":"trim","op":"like","val":"%Sport%"},{"field":"trim","op":"not like","val":"Base%"},)"
        R"({"field":"series","op":"not null"},{"field":"invoice","op":"is null"}])";
    const std::vector<q::Condition> expected = {
        C("year", q::Op::Eq, {std::int64_t{2019}}),
        C("year", q::Op::Ne, {std::int64_t{2016}}),
        C("year", q::Op::Gt, {std::int64_t{2015}}),
        C("year", q::Op::Lt, {std::int64_t{2021}}),
        C("msrp", q::Op::Ge, {10000.5}),
        C("msrp", q::Op::Le, {std::string("90000")}),
        C("make", q::Op::In, {std::string("BMW"), std::string("Audi")}),
        C("make", q::Op::NotIn, {std::string("Kia")}),
        C("trim", q::Op::Like, {std::string("%Sport%")}),
        C("trim", q::Op::NotLike, {std::string("Base%")}),
        C("series", q::Op::NotNull),
        C("invoice", q::Op::IsNull),
    };
    EXPECT_EQ(q::parse(text), expected);
    EXPECT_EQ(q::encode(expected), text);
}

TEST(QueryParse, ScalarKindsWhitespaceAndMemberOrder) {
    auto cs = q::parse(" [ { \"val\" : [ true , false , null , -7 , 2.5e3 , \"x\" ] ,\n\t\"op\" : \"IN\" , \"field\" : \"a\" } ] \n");
    ASSERT_EQ(cs.size(), 1u);
    EXPECT_EQ(cs[0], C("a", q::Op::In, {true, false, q::Scalar{}, std::int64_t{-7}, 2500.0, std::string("x")}));
    EXPECT_TRUE(q::parse("[]").empty());
    EXPECT_TRUE(q::parse(" [ ] ").empty());
}

TEST(QueryParse, EscapedKeysAndNulCharacters) {
    EXPECT_EQ(q::parse(R"([{"fie\u006cd":"a","op":"=","val":"\u0000"}])"),
              std::vector<q::Condition>{C("a", q::Op::Eq, {std::string(1, '\0')})});
}

TEST(QueryParse, NulInALikePatternIsRefusedNotCut) {
    // SQLite's LIKE reads its pattern as a C string: "SUV\0zzz" would match as "SUV" (every SUV).
    const std::string text = R"([{"field":"bodies.type","op":"like","val":"SUV\u0000zzz"}])";
    const Caught c = parse_error(text);
    EXPECT_EQ(c.message, "condition 1 (field \"bodies.type\", op \"like\"): val must not contain a NUL character "
                         "(\\u0000) in a LIKE pattern (at byte 42)");
    EXPECT_EQ(c.position, 42u);
    EXPECT_EQ(parse_error(R"([{"field":"make","op":"NOT LIKE","val":"\u0000"}])").message,
              "condition 1 (field \"make\", op \"NOT LIKE\"): val must not contain a NUL character (\\u0000) in a "
              "LIKE pattern (at byte 39)");
    auto err = [](std::vector<q::Condition> cs) { return catch_query_error([&] { (void)q::encode(cs); }).message; };
    EXPECT_EQ(err({C("a", q::Op::Like, {std::string("SUV\0zzz", 7)})}),
              "condition 1 (field \"a\", op \"like\"): val must not contain a NUL character (\\u0000) in a LIKE pattern");
    // Other operators keep it as an ordinary character (SQLite compares bound text by its length).
    EXPECT_EQ(q::parse(R"([{"field":"make","op":"in","val":["a\u0000b"]}])"),
              std::vector<q::Condition>{C("make", q::Op::In, {std::string("a\0b", 3)})});
}

TEST(QueryParse, NullOperatorsTolerateNullVal) {
    EXPECT_EQ(q::parse(R"([{"field":"series","op":"is null","val":null}])"), std::vector<q::Condition>{C("series", q::Op::IsNull)});
    EXPECT_EQ(q::parse(R"([{"field":"series","op":"not null"}])"), std::vector<q::Condition>{C("series", q::Op::NotNull)});
}

TEST(QueryParse, StringsAreUnescapedAndUnicodeKept) {
    auto cs = q::parse(R"([{"field":"make","op":"=","val":"a\"b\\c\/d\u00e9\ud83d\ude00\n\t"}])");
    ASSERT_EQ(cs.size(), 1u);
    EXPECT_EQ(std::get<std::string>(cs[0].values[0]), "a\"b\\c/d\xC3\xA9\xF0\x9F\x98\x80\n\t");
    auto raw = q::parse("[{\"field\":\"model\",\"op\":\"=\",\"val\":\"Citro\xC3\xABn \xE6\x97\xA5\"}]");
    EXPECT_EQ(std::get<std::string>(raw[0].values[0]), "Citro\xC3\xABn \xE6\x97\xA5");
}

TEST(QueryParse, NumbersKeepIntegerOrReal) {
    auto cs = q::parse(R"([{"field":"a","op":"in","val":[0,-0,9223372036854775807,-9223372036854775808,1.0,18446744073709551615,1e-7]}])");
    ASSERT_EQ(cs[0].values.size(), 7u);
    EXPECT_EQ(cs[0].values[0], q::Scalar(std::int64_t{0}));
    EXPECT_EQ(cs[0].values[2], q::Scalar(std::numeric_limits<std::int64_t>::max()));
    EXPECT_EQ(cs[0].values[3], q::Scalar(std::numeric_limits<std::int64_t>::min()));
    EXPECT_EQ(cs[0].values[4], q::Scalar(1.0));
    EXPECT_EQ(cs[0].values[5], q::Scalar(18446744073709551615.0));  // beyond int64: a real, as PHP does
    EXPECT_EQ(cs[0].values[6], q::Scalar(1e-7));
}

struct BadText {
    std::string text;
    std::string message;
    std::size_t position;
    std::string field = {};
    std::string op = {};
};

TEST(QueryParse, EachBadInputGetsItsMessageAndPosition) {
    const std::string kMalformed = "json is not valid JSON: malformed JSON (check commas, colons, quotes and brackets)";
    const std::vector<BadText> cases = {
        {"", "json is empty; expected an array of conditions (at byte 0)", 0},
        {"  \n ", "json is empty; expected an array of conditions (at byte 0)", 0},
        {"{}", "json must be an array of conditions, got an object (at byte 0)", 0},
        {" \"x\"", "json must be an array of conditions, got a string (at byte 1)", 1},
        {"12", "json must be an array of conditions, got a number (at byte 0)", 0},
        {"null", "json must be an array of conditions, got null (at byte 0)", 0},
        {"  false ", "json must be an array of conditions, got a boolean (at byte 2)", 2},
        {"nope", "json is not valid JSON: invalid literal (expected true, false or null) (at byte 0)", 0},
        {"12abc", "json is not valid JSON: invalid number (at byte 0)", 0},
        {"x", kMalformed + " (at byte 0)", 0},
        {R"([{"field":"a","op":"=","val":-}])", "json is not valid JSON: invalid number (at byte 29)", 29},
        {R"([{"field":"year","op":">=","val":2018}] x)", "json is not valid JSON: unexpected content after the array (at byte 40)", 40},
        {R"([{"field":"year","op":">=","val":2018}]])", "json is not valid JSON: unexpected content after the array (at byte 39)", 39},
        {R"([{"field":"year","op":">=","val":2018}][])", "json is not valid JSON: unexpected content after the array (at byte 39)", 39},
        {R"([{"field":"year" "op":">=","val":2018}])", kMalformed + " (at byte 17)", 17},
        {R"([{"field":"year","op":">=","val":01}])", "json is not valid JSON: invalid number (at byte 33)", 33},
        {R"([{"field":"year","op":">=","val":1.}])", "json is not valid JSON: invalid number (at byte 33)", 33},
        {R"([{"field":"year","op":">=","val":tru}])", "json is not valid JSON: invalid literal (expected true, false or null) (at byte 33)", 33},
        {R"([{"field":"year","op":">=","val":nul}])", "json is not valid JSON: invalid literal (expected true, false or null) (at byte 33)", 33},
        {R"([{"field":"year,"op":">="}])", "json is not valid JSON: unclosed string (at byte 24)", 24},
        {R"([{"field":"year","op":"in","val":[1,2}])", "json is not valid JSON: unexpected '}' (at byte 37)", 37},
        {"[1,2,", "json is not valid JSON: unexpected end of text, missing ']' (at byte 5)", 5},
        {R"([{"field":"a","op":"=","val":1})", "json is not valid JSON: unexpected end of text, missing ']' (at byte 31)", 31},
        {"[,1]", kMalformed + " (at byte 1)", 1},
        {R"([{"field":"a","op":"=","val":1},])", kMalformed + " (at byte 32)", 32},
        {R"([{"field":"a","op":"=","val":1,}])", kMalformed + " (at byte 31)", 31},
        {R"([{"field":"a","op":"=","val":1} {"field":"a","op":"=","val":1}])", kMalformed + " (at byte 32)", 32},
        {R"([{"field":"a":"op"}])", kMalformed + " (at byte 13)", 13},
        {R"([{"field":"a","op":"=","val":True}])", kMalformed + " (at byte 29)", 29},
        {R"([{"field":"a","op":"=","val":"\x"}])", "json is not valid JSON: invalid string escape (at byte 29)", 29},
        {R"([{"field":"a","op":"=","val":"\ud800"}])", "json is not valid JSON: invalid string escape (at byte 29)", 29},
        {"[{\"field\":\"a\",\"op\":\"=\",\"val\":\"a\tb\"}]", "json is not valid JSON: control character in a string (escape it) (at byte 31)", 31},
        {R"([{"field":"a","op":"=","val":1e999}])", "json is not valid JSON: number out of range (at byte 29)", 29},
        {R"([{"field":"a","op":"=","val":-99999999999999999999}])", "json is not valid JSON: number out of range (at byte 29)", 29},
        {"[" + std::string(40, '[') + std::string(41, ']'), "json is not valid JSON: nested too deeply (at byte 32)", 32},
        {"[\"\xC3\x28\"]", "json is not valid UTF-8 (at byte 2)", 2},
        {"[\"\xED\xA0\x80\"]", "json is not valid UTF-8 (at byte 2)", 2},      // encoded surrogate
        {"[\"\xC0\xAF\"]", "json is not valid UTF-8 (at byte 2)", 2},          // overlong '/'
        {"[1]", "condition 1 must be an object {\"field\", \"op\", \"val\"}, got a number (at byte 1)", 1},
        {R"([{"field":"a","op":"=","val":1},"x"])", "condition 2 must be an object {\"field\", \"op\", \"val\"}, got a string (at byte 32)", 32},
        {R"([{"field":"a","op":"=","val":1},[]])", "condition 2 must be an object {\"field\", \"op\", \"val\"}, got an array (at byte 32)", 32},
        {R"([{"op":"="}])", "condition 1 (op \"=\"): missing \"field\" (at byte 1)", 1, "", "="},
        {R"([{"field":"a"}])", "condition 1 (field \"a\"): missing \"op\" (at byte 1)", 1, "a"},
        {R"([{"field":"a","op":"="}])", "condition 1 (field \"a\", op \"=\"): missing \"val\" (at byte 1)", 1, "a", "="},
        {R"([{"field":1,"op":"="}])", "condition 1: \"field\" must be a string, got a number (at byte 10)", 10},
        {R"([{"field":null,"op":"="}])", "condition 1: \"field\" must be a string, got null (at byte 10)", 10},
        {R"([{"field":"a","op":["="]}])", "condition 1 (field \"a\"): \"op\" must be a string, got an array (at byte 19)", 19, "a"},
        {R"([{"field":"","op":"=","val":1}])", "condition 1 (field \"\", op \"=\"): \"field\" must not be empty (at byte 1)", 1, "", "="},
        {R"([{"field":"a","op":"=="}])",
         "condition 1 (field \"a\", op \"==\"): unknown op; expected one of =, !=, >, <, >=, <=, in, not in, like, "
         "not like, not null, is null (at byte 1)", 1, "a", "=="},
        {R"([{"field":"a","op":"=","val":1,"value":2}])",
         "condition 1 (field \"a\", op \"=\"): unknown member \"value\"; expected field, op, val (at byte 39)", 39, "a", "="},
        {R"([{"field":"a","field":"b","op":"=","val":1}])", "condition 1 (field \"a\"): duplicate member \"field\" (at byte 22)", 22, "a"},
        {R"([{"field":"a","op":"=","val":1,"val":2}])", "condition 1 (field \"a\", op \"=\"): duplicate member \"val\" (at byte 37)", 37, "a", "="},
        {R"([{"field":"a","op":"=","val":[1]}])",
         "condition 1 (field \"a\", op \"=\"): val must be a single value, got an array (use op \"in\" for a list) (at byte 29)", 29, "a", "="},
        {R"([{"field":"a","op":"like","val":["x"]}])",
         "condition 1 (field \"a\", op \"like\"): val must be a single value, got an array (use op \"in\" for a list) (at byte 32)", 32, "a", "like"},
        {R"([{"field":"a","op":"in","val":1}])", "condition 1 (field \"a\", op \"in\"): val must be an array of values, got a number (at byte 30)", 30, "a", "in"},
        {R"([{"field":"a","op":"not in","val":"x"}])", "condition 1 (field \"a\", op \"not in\"): val must be an array of values, got a string (at byte 34)", 34, "a", "not in"},
        {R"([{"field":"a","op":"in","val":[]}])", "condition 1 (field \"a\", op \"in\"): val must not be an empty array (at byte 30)", 30, "a", "in"},
        {R"([{"field":"a","op":"in","val":[1,[2]]}])",
         "condition 1 (field \"a\", op \"in\"): val[1] must be a scalar (string, number, true, false or null), got an array (at byte 33)", 33, "a", "in"},
        {R"([{"field":"a","op":"in","val":[1,{"x":1}]}])",
         "condition 1 (field \"a\", op \"in\"): val[1] must be a scalar (string, number, true, false or null), got an object (at byte 33)", 33, "a", "in"},
        {R"([{"field":"a","op":"=","val":{"x":1}}])",
         "condition 1 (field \"a\", op \"=\"): val must be a scalar or an array of scalars, got an object (at byte 29)", 29, "a", "="},
        {R"([{"val":{"a":1},"op":"=","field":"a"}])",
         "condition 1 (field \"a\", op \"=\"): val must be a scalar or an array of scalars, got an object (at byte 8)", 8, "a", "="},
        {R"([{"field":"a","op":"is null","val":1}])", "condition 1 (field \"a\", op \"is null\"): val must be absent or null, got a number (at byte 35)", 35, "a", "is null"},
        {R"([{"field":"a","op":"not null","val":[]}])", "condition 1 (field \"a\", op \"not null\"): val must be absent or null, got an array (at byte 36)", 36, "a", "not null"},
    };
    for (const auto& c : cases) {
        Caught e = parse_error(c.text);
        EXPECT_EQ(e.message, c.message) << c.text;
        EXPECT_EQ(e.position, c.position) << c.text;
        EXPECT_EQ(e.field, c.field) << c.text;
        EXPECT_EQ(e.op, c.op) << c.text;
    }
}

TEST(QueryParse, LongUserTextIsCutInMessages) {
    const std::string field(300, 'f');
    Caught e = parse_error(R"([{"field":")" + field + R"(","op":"x"}])");
    EXPECT_EQ(e.message, "condition 1 (field \"" + std::string(64, 'f') + "...\", op \"x\"): unknown op; expected one of =, !=, "
                         ">, <, >=, <=, in, not in, like, not like, not null, is null (at byte 1)");
    EXPECT_EQ(e.field, field);  // the attribute keeps the whole name
    // The cut never splits a UTF-8 character.
    std::string accents = "x";
    for (int i = 0; i < 60; ++i) accents += "\xC3\xA9";
    Caught u = parse_error(R"([{"field":")" + accents + R"(","op":"?"}])");
    std::string kept = "x";
    for (int i = 0; i < 31; ++i) kept += "\xC3\xA9";  // 63 bytes: the 64th would split a character
    EXPECT_EQ(u.message.substr(0, 20 + kept.size() + 5), "condition 1 (field \"" + kept + "...\",") << u.message;
}

TEST(QueryParse, ControlCharactersInMessagesAreEscaped) {
    Caught e = parse_error(R"([{"field":"a\nb","op":"nope"}])");
    EXPECT_EQ(e.message.substr(0, 28), "condition 1 (field \"a\\nb\", o");
    EXPECT_EQ(e.field, "a\nb");
}

TEST(QueryParse, Limits) {
    // kMaxJsonLength bytes are accepted; one more is not.
    std::string cond = R"({"field":"make","op":"=","val":")";
    std::string text = "[" + cond + std::string(q::kMaxJsonLength - cond.size() - 4, 'x') + "\"}]";
    ASSERT_EQ(text.size(), q::kMaxJsonLength);
    EXPECT_EQ(q::parse(text).size(), 1u);
    text.insert(1, " ");
    Caught e = parse_error(text);
    EXPECT_EQ(e.message, "json is 8193 bytes, longer than the maximum of 8192 (at byte 8192)");
    EXPECT_EQ(e.position, q::kMaxJsonLength);

    // kMaxConditions conditions are accepted; one more is not.
    std::string many = "[";
    for (std::size_t i = 0; i < q::kMaxConditions; ++i) many += std::string(i ? "," : "") + R"({"field":"year","op":"not null"})";
    EXPECT_EQ(q::parse(many + "]").size(), q::kMaxConditions);
    const std::size_t at = many.size() + 1;
    Caught c = parse_error(many + R"(,{"field":"year","op":"not null"}])");
    EXPECT_EQ(c.message, "json has more than 32 conditions (at byte " + std::to_string(at) + ")");
    EXPECT_EQ(c.position, at);

    // kMaxArrayValues values in an in-array are accepted; one more is not.
    std::string values;
    for (std::size_t i = 0; i < q::kMaxArrayValues; ++i) values += std::string(i ? "," : "") + "1";
    const std::string head = R"([{"field":"year","op":"in","val":[)";
    EXPECT_EQ(q::parse(head + values + "]}]")[0].values.size(), q::kMaxArrayValues);
    Caught v = parse_error(head + values + ",2]}]");
    EXPECT_EQ(v.message, "condition 1 (field \"year\", op \"in\"): val has more than 500 values (at byte " +
                             std::to_string(head.size() + values.size() + 1) + ")");
}

// ---- ConditionReader: the rules a front end without text (the Python bindings) uses --------------

TEST(QueryReader, SameRulesAndMessagesAsTheParserWithoutPositions) {
    using M = q::ConditionReader::Member;
    // {"field":"a","op":"in","val":[1,"x"]} fed member by member.
    q::ConditionReader ok(0);
    ok.text(ok.key("field"), q::Kind::String, "a");
    ok.text(ok.key("op"), q::Kind::String, "IN");
    EXPECT_EQ(ok.key("val"), M::Val);
    ok.begin_array();
    ok.element(std::int64_t{1});
    ok.element(std::string("x"));
    EXPECT_EQ(ok.finish(), C("a", q::Op::In, {std::int64_t{1}, std::string("x")}));

    auto msg = [](auto&& feed) {
        return catch_query_error([&] {
            q::ConditionReader r(1);
            feed(r);
            (void)r.finish();
        });
    };
    // Each case against the parser's message for the same condition as text (second of a list).
    auto parsed = [](const std::string& object) {
        Caught c = catch_query_error([&] { (void)q::parse(R"([{"field":"z","op":"not null"},)" + object + "]"); });
        return c.message.substr(0, c.message.rfind(" (at byte "));
    };
    Caught c = msg([](q::ConditionReader& r) {
        r.text(r.key("field"), q::Kind::String, "a");
        r.text(r.key("op"), q::Kind::String, "in");
        r.key("val");
        r.begin_array();
        r.element(std::int64_t{1});
        r.bad_element(q::Kind::Object);
    });
    EXPECT_EQ(c.message, parsed(R"({"field":"a","op":"in","val":[1,{}]})"));
    EXPECT_EQ(c.position, q::QueryError::npos);
    EXPECT_EQ(c.field, "a");
    EXPECT_EQ(c.op, "in");
    EXPECT_EQ(msg([](q::ConditionReader& r) { r.text(r.key("field"), q::Kind::Number, ""); }).message,
              parsed(R"({"field":5})"));
    EXPECT_EQ(msg([](q::ConditionReader& r) {
                  r.text(r.key("field"), q::Kind::String, "a");
                  r.key("value");
              }).message,
              parsed(R"({"field":"a","value":1})"));
    EXPECT_EQ(msg([](q::ConditionReader& r) {
                  r.text(r.key("op"), q::Kind::String, "=");
                  r.key("val");
                  r.scalar(std::int64_t{1});
              }).message,
              parsed(R"({"op":"=","val":1})"));
    EXPECT_EQ(msg([](q::ConditionReader& r) {
                  r.text(r.key("field"), q::Kind::String, "a");
                  r.text(r.key("op"), q::Kind::String, "is null");
                  r.key("val");
                  r.begin_array();
              }).message,
              parsed(R"({"field":"a","op":"is null","val":[]})"));
    EXPECT_EQ(msg([](q::ConditionReader& r) {
                  r.text(r.key("field"), q::Kind::String, "a");
                  r.text(r.key("op"), q::Kind::String, "=");
                  r.key("val");
                  r.bad_val(q::Kind::Object);
              }).message,
              parsed(R"({"field":"a","op":"=","val":{"b":1}})"));
    EXPECT_EQ(msg([](q::ConditionReader& r) {
                  r.text(r.key("field"), q::Kind::String, "");
                  r.text(r.key("op"), q::Kind::String, "=");
              }).message,
              parsed(R"({"field":"","op":"="})"));
    // What only a front end without text meets: values of no JSON kind, integers out of range, NaN.
    EXPECT_EQ(msg([](q::ConditionReader& r) {
                  r.text(r.key("field"), q::Kind::String, "a");
                  r.text(r.key("op"), q::Kind::String, "=");
                  r.key("val");
                  r.bad_val(q::Kind::Other, q::QueryError::npos, "bytes");
              }).message,
              "condition 2 (field \"a\", op \"=\"): val must be a scalar or an array of scalars, got bytes");
    EXPECT_EQ(msg([](q::ConditionReader& r) {
                  r.text(r.key("field"), q::Kind::String, "a");
                  r.text(r.key("op"), q::Kind::String, "in");
                  r.key("val");
                  r.begin_array();
                  r.element(std::int64_t{1});
                  r.out_of_range();
              }).message,
              "condition 2 (field \"a\", op \"in\"): val[1] is out of the 64-bit integer range");
    EXPECT_EQ(msg([](q::ConditionReader& r) {
                  r.text(r.key("field"), q::Kind::String, "a");
                  r.text(r.key("op"), q::Kind::String, "=");
                  r.key("val");
                  r.scalar(std::nan(""));
              }).message,
              "condition 2 (field \"a\", op \"=\"): val must be a finite number");
    EXPECT_EQ(catch_query_error([] { q::ConditionReader::not_an_object(1, q::Kind::Number); }).message,
              parsed("5"));
}

TEST(QueryEncode, WithAnEndpointNormalizesFirst) {
    const auto& trims = EP("/api/trims/v2");
    EXPECT_EQ(q::encode({C("year", q::Op::Ge, {std::string("2018")}), C("model", q::Op::Eq, {std::int64_t{911}})}, trims),
              R"([{"field":"year","op":">=","val":2018},{"field":"model","op":"=","val":"911"}])");
    EXPECT_EQ(catch_query_error([&] { (void)q::encode({C("foo", q::Op::Eq, {std::int64_t{1}})}, trims); }).message,
              "condition 1 (field \"foo\", op \"=\"): unknown json field \"foo\" for /api/trims/v2");
}

// ---- encode and round trips -----------------------------------------------------------------

TEST(QueryEncode, ExactText) {
    EXPECT_EQ(q::encode({}), "[]");
    EXPECT_EQ(q::encode({C("year", q::Op::Ge, {std::int64_t{2018}})}), R"([{"field":"year","op":">=","val":2018}])");
    EXPECT_EQ(q::encode({C("series", q::Op::IsNull), C("series", q::Op::NotNull)}),
              R"([{"field":"series","op":"is null"},{"field":"series","op":"not null"}])");
    EXPECT_EQ(q::encode({C("make", q::Op::NotIn, {std::string("BMW"), std::string("Kia")})}),
              R"([{"field":"make","op":"not in","val":["BMW","Kia"]}])");
    EXPECT_EQ(q::encode({C("a", q::Op::In, {true, false, q::Scalar{}, 0.1, 2.0, -0.0, 1e300, 5e-324})}),
              R"([{"field":"a","op":"in","val":[true,false,null,0.1,2.0,-0.0,1e+300,5e-324]}])");
    // Strings: format's plain JSON escapes (quote, backslash, controls below 0x20); DEL and
    // non-ASCII stay as they are; '/' unescaped.
    EXPECT_EQ(q::encode({C("trim", q::Op::Eq, {std::string("a\"b\\c/d\n\t\x01\x7f\xC3\xA9\xF0\x9F\x98\x80")})}),
              "[{\"field\":\"trim\",\"op\":\"=\",\"val\":\"a\\\"b\\\\c/d\\n\\t\\u0001\x7f\xC3\xA9\xF0\x9F\x98\x80\"}]");
}

TEST(QueryEncode, RejectsWhatCannotBeSent) {
    auto err = [](std::vector<q::Condition> cs) { return catch_query_error([&] { (void)q::encode(cs); }).message; };
    EXPECT_EQ(err({C("a", q::Op::Eq, {std::nan("")})}), "condition 1 (field \"a\", op \"=\"): val must be a finite number");
    EXPECT_EQ(err({C("a", q::Op::In, {1.0, HUGE_VAL})}), "condition 1 (field \"a\", op \"in\"): val[1] must be a finite number");
    EXPECT_EQ(err({C("a", q::Op::Eq, {std::string("\xFF")})}), "condition 1 (field \"a\", op \"=\"): val is not valid UTF-8");
    EXPECT_EQ(err({C("", q::Op::Eq, {std::int64_t{1}})}), "condition 1 (field \"\", op \"=\"): \"field\" must not be empty");
    EXPECT_EQ(err({C("a", q::Op::Eq)}), "condition 1 (field \"a\", op \"=\"): val must be a single value, got 0");
    EXPECT_EQ(err({C("a", q::Op::Eq, {std::int64_t{1}, std::int64_t{2}})}),
              "condition 1 (field \"a\", op \"=\"): val must be a single value, got 2");
    EXPECT_EQ(err({C("a", q::Op::In)}), "condition 1 (field \"a\", op \"in\"): val must not be an empty array");
    EXPECT_EQ(err({C("a", q::Op::IsNull, {std::int64_t{1}})}), "condition 1 (field \"a\", op \"is null\"): takes no val");
    EXPECT_EQ(err({C("a", q::Op::In, Scalars(501, std::int64_t{1}))}),
              "condition 1 (field \"a\", op \"in\"): val has more than 500 values");
    EXPECT_EQ(err(std::vector<q::Condition>(33, C("a", q::Op::IsNull))), "json has more than 32 conditions");
    EXPECT_EQ(err({C("a", q::Op::Eq, {std::string(9000, 'x')})}), "json is 9033 bytes, longer than the maximum of 8192");
}

TEST(QueryEncode, RoundTrips) {
    const std::vector<std::vector<q::Condition>> cases = {
        {C("year", q::Op::Ge, {std::int64_t{2018}}), C("year", q::Op::Le, {std::int64_t{2020}})},
        {C("size", q::Op::Gt, {1.5}), C("size", q::Op::Lt, {2.0}), C("msrp", q::Op::Eq, {-0.1})},
        {C("make", q::Op::In, {std::string("BMW"), std::string("Mercedes-Benz"), std::string("Citro\xC3\xABn")})},
        {C("trim", q::Op::Like, {std::string("%'; DROP TABLE trims; --%")}), C("trim", q::Op::NotLike, {std::string("_%\\")})},
        {C("series", q::Op::IsNull), C("invoice", q::Op::NotNull)},
        {C("a", q::Op::In, {true, false, q::Scalar{}, std::numeric_limits<std::int64_t>::min(), 1e-300, 123456789.123})},
        {C("engines.fuel_type", q::Op::Eq, {std::string("\xE6\x97\xA5\xE6\x9C\xAC \"quoted\" \\ \x1f")})},
        {C("x", q::Op::Ne, {std::string("")}), C("x", q::Op::Eq, {std::int64_t{0}})},
    };
    for (const auto& cs : cases) {
        const std::string text = q::encode(cs);
        EXPECT_EQ(q::parse(text), cs) << text;
        EXPECT_EQ(q::encode(q::parse(text)), text);
    }
    // Parsed text in another spelling re-encodes to the canonical one, which is stable.
    const std::string loose = R"( [ {"val":[1, 2.50, "x"], "op":"NOT IN", "field":"a"}, {"field":"b","op":"is null","val":null} ] )";
    const std::string canonical = q::encode(q::parse(loose));
    EXPECT_EQ(canonical, R"([{"field":"a","op":"not in","val":[1,2.5,"x"]},{"field":"b","op":"is null"}])");
    EXPECT_EQ(q::encode(q::parse(canonical)), canonical);
}

// ---- validate / normalize ---------------------------------------------------------------------

namespace {
// A value of the field's own type.
q::Scalar sample(const sc::JsonField& f) {
    switch (f.type) {
        case sc::Type::Int: case sc::Type::Int64: return std::int64_t{2019};
        case sc::Type::Decimal: case sc::Type::Float: return 2.5;
        case sc::Type::Bool: return true;
        case sc::Type::Timestamp: return std::string("2023-06-29T21:01:06-04:00");
        default: return std::string("BMW");
    }
}
}  // namespace

TEST(QueryValidate, EveryJsonFieldOfEveryEndpointResolvesWithEveryOperator) {
    std::size_t endpoints = 0, fields = 0;
    for (const auto& e : sc::endpoints()) {
        if (!e.accepts_json()) continue;
        ++endpoints;
        for (const auto& f : e.json_fields) {
            ++fields;
            ASSERT_FALSE(f.column.empty()) << e.path << " " << f.name;
            for (const auto& [name, op] : kAllOps) {
                Scalars values;
                if (op == q::Op::Like || op == q::Op::NotLike) values = {std::string("%a%")};
                else if (q::op_takes_array(op)) values = {sample(f), sample(f)};
                else if (!q::op_takes_no_value(op)) values = {sample(f)};
                std::vector<q::Condition> cs = {C(f.name, op, values)};
                EXPECT_NO_THROW(q::validate(cs, e)) << e.path << " " << f.name << " " << name;
                q::SqlFragment sql = q::to_sql(cs, e);
                EXPECT_EQ(sql.params, values) << e.path << " " << f.name;
                EXPECT_EQ(count_of(sql.sql, '?'), values.size()) << sql.sql;
                if (f.related_table.empty())
                    EXPECT_EQ(sql.sql.rfind(f.column + " ", 0), 0u) << sql.sql;
                else
                    EXPECT_EQ(sql.sql.rfind("id IN (SELECT " + f.related_key + " FROM " + f.related_table + " WHERE " + f.column + " ", 0), 0u)
                        << sql.sql;
            }
        }
    }
    EXPECT_GE(endpoints, 17u);
    EXPECT_GE(fields, 250u);
}

TEST(QueryValidate, SpecFieldListsAreAccepted) {
    // The json field lists of docs/resources.md, endpoint by endpoint.
    const std::vector<std::pair<const char*, std::vector<const char*>>> spec = {
        {"/api/bodies/v2", {"year", "make", "model", "series", "submodel", "trim", "description", "make_id", "model_id",
                            "submodel_id", "trim_id", "type", "doors", "seats", "length", "width", "height", "wheel_base",
                            "front_track", "rear_track", "ground_clearance", "cargo_capacity", "max_cargo_capacity",
                            "curb_weight", "gross_weight", "max_payload", "max_towing_capacity", "created", "modified"}},
        {"/api/bodies", {"year", "make", "model", "trim", "type", "doors", "seats", "length", "width", "height", "wheel_base",
                         "front_track", "rear_track", "ground_clearance", "cargo_capacity", "max_cargo_capacity",
                         "curb_weight", "gross_weight", "max_payload", "max_towing_capacity", "make_model_trim_id",
                         "created", "modified", "make_id", "make_model_id"}},
        {"/api/engines/v2", {"year", "make", "model", "series", "submodel", "trim", "description", "make_id", "model_id",
                             "submodel_id", "trim_id", "fuel_type", "engine_type", "transmission", "drive_type", "cam_type",
                             "valve_timing", "valves", "horsepower_hp", "size", "cylinders", "created", "modified"}},
        {"/api/engines", {"year", "make", "model", "trim", "fuel_type", "engine_type", "transmission", "drive_type",
                          "cam_type", "valve_timing", "valves", "horsepower_hp", "size", "cylinders", "created",
                          "modified", "make_id", "make_model_id", "make_model_trim_id"}},
        {"/api/exterior-colors/v2", {"year", "make", "model", "series", "submodel", "trim", "description", "make_id",
                                     "model_id", "submodel_id", "trim_id", "color", "rgb", "modified", "created"}},
        {"/api/interior-colors/v2", {"year", "make", "model", "series", "submodel", "trim", "description", "make_id",
                                     "model_id", "submodel_id", "trim_id", "color", "rgb", "modified", "created"}},
        {"/api/exterior-colors", {"year", "make", "model", "trim", "name", "rgb", "created", "modified", "make_id",
                                  "make_model_id", "make_model_trim_id"}},
        {"/api/interior-colors", {"year", "make", "model", "trim", "name", "rgb", "created", "modified", "make_id",
                                  "make_model_id", "make_model_trim_id"}},
        {"/api/models/v2", {"year", "make", "model", "make_id", "created", "modified"}},
        {"/api/trims/v2", {"year", "make", "model", "submodel", "engines.fuel_type", "bodies.type"}},
    };
    for (const auto& [path, names] : spec) {
        const sc::Endpoint& e = EP(path);
        for (const char* n : names) {
            ASSERT_NE(e.json_field(n), nullptr) << path << " " << n;
            EXPECT_NO_THROW(q::validate({C(n, q::Op::NotNull)}, e)) << path << " " << n;
        }
    }
}

TEST(QueryValidate, UnknownFieldAndEndpointWithoutJson) {
    Caught e = catch_query_error([] { q::validate({C("foo", q::Op::Eq, {std::int64_t{1}})}, EP("/api/trims/v2")); });
    EXPECT_EQ(e.message, "condition 1 (field \"foo\", op \"=\"): unknown json field \"foo\" for /api/trims/v2");
    EXPECT_EQ(e.field, "foo");
    EXPECT_EQ(e.op, "=");
    EXPECT_EQ(e.position, q::QueryError::npos);
    // Names are exact: a field of another endpoint, case and dotted forms are not accepted.
    EXPECT_THROW(q::validate({C("series", q::Op::IsNull)}, EP("/api/bodies")), q::QueryError);
    EXPECT_THROW(q::validate({C("Year", q::Op::IsNull)}, EP("/api/trims/v2")), q::QueryError);
    EXPECT_THROW(q::validate({C("engines.fuel_type", q::Op::IsNull)}, EP("/api/engines/v2")), q::QueryError);
    Caught m = catch_query_error([] { q::validate({C("name", q::Op::IsNull)}, EP("/api/makes/v2")); });
    EXPECT_EQ(m.message, "/api/makes/v2 does not accept the json parameter");
    // An empty list is valid anywhere the parameter exists.
    EXPECT_NO_THROW(q::validate({}, EP("/api/trims/v2")));
}

TEST(QueryValidate, TypeErrorsNameFieldOpAndReason) {
    const sc::Endpoint& trims = EP("/api/trims/v2");
    const sc::Endpoint& engines = EP("/api/engines/v2");
    auto msg = [](const sc::Endpoint& e, std::vector<q::Condition> cs) {
        return catch_query_error([&] { q::validate(cs, e); }).message;
    };
    EXPECT_EQ(msg(trims, {C("make", q::Op::NotNull), C("year", q::Op::Ge, {std::string("soon")})}),
              "condition 2 (field \"year\", op \">=\"): val must be a number for integer field year");
    EXPECT_EQ(msg(trims, {C("year", q::Op::Eq, {true})}),
              "condition 1 (field \"year\", op \"=\"): val must be a number for integer field year");
    EXPECT_EQ(msg(trims, {C("year", q::Op::In, {std::int64_t{2019}, std::string("")})}),
              "condition 1 (field \"year\", op \"in\"): val[1] must be a number for integer field year");
    EXPECT_EQ(msg(trims, {C("year", q::Op::Eq, {std::string(" 2019")})}),
              "condition 1 (field \"year\", op \"=\"): val must be a number for integer field year");
    EXPECT_EQ(msg(engines, {C("size", q::Op::Gt, {std::string("2.0L")})}),
              "condition 1 (field \"size\", op \">\"): val must be a number for decimal field size");
    EXPECT_EQ(msg(trims, {C("make", q::Op::Eq, {1.5})}),
              "condition 1 (field \"make\", op \"=\"): val must be a string for string field make");
    EXPECT_EQ(msg(trims, {C("make", q::Op::Eq, {false})}),
              "condition 1 (field \"make\", op \"=\"): val must be a string for string field make");
    EXPECT_EQ(msg(trims, {C("created", q::Op::Ge, {std::int64_t{2023}})}),
              "condition 1 (field \"created\", op \">=\"): val must be a string for timestamp field created");
    EXPECT_EQ(msg(trims, {C("trim", q::Op::Like, {std::int64_t{5}})}),
              "condition 1 (field \"trim\", op \"like\"): val must be a string (a LIKE pattern)");
    EXPECT_EQ(msg(trims, {C("series", q::Op::Eq, {q::Scalar{}})}),
              "condition 1 (field \"series\", op \"=\"): val must not be null; use op \"is null\" or \"not null\"");
    EXPECT_EQ(msg(trims, {C("make", q::Op::NotIn, {std::string("BMW"), q::Scalar{}})}),
              "condition 1 (field \"make\", op \"not in\"): val[1] must not be null; use op \"is null\" or \"not null\"");
    EXPECT_EQ(msg(trims, std::vector<q::Condition>(33, C("make", q::Op::NotNull))), "json has more than 32 conditions");
    EXPECT_EQ(msg(trims, {C("msrp", q::Op::Eq, {std::nan("")})}),
              "condition 1 (field \"msrp\", op \"=\"): val must be a finite number");
}

TEST(QueryValidate, NormalizeConvertsLenientValues) {
    const sc::Endpoint& trims = EP("/api/trims/v2");
    auto n = q::normalize({C("year", q::Op::In, {std::string("2018"), std::string("-3"), std::string("2019.5"), std::string("1e3"),
                                                 std::int64_t{7}, 8.25}),
                           C("model", q::Op::Eq, {std::int64_t{911}}),
                           C("trim", q::Op::Like, {std::string("2018%")}),
                           C("msrp", q::Op::Lt, {std::string("99999999999999999999")})},
                          trims);
    ASSERT_EQ(n.size(), 4u);
    EXPECT_EQ(n[0].values, (Scalars{std::int64_t{2018}, std::int64_t{-3}, 2019.5, 1000.0, std::int64_t{7}, 8.25}));
    EXPECT_EQ(n[1].values, (Scalars{std::string("911")}));
    EXPECT_EQ(n[2].values, (Scalars{std::string("2018%")}));  // like keeps text
    EXPECT_EQ(n[3].values, (Scalars{1e20}));                     // beyond int64: a real
    // Timestamps and strings keep their text as given.
    auto t = q::normalize({C("created", q::Op::Ge, {std::string("2023-01-01")})}, trims);
    EXPECT_EQ(t[0].values, (Scalars{std::string("2023-01-01")}));
}

// ---- SQL ---------------------------------------------------------------------------------------

TEST(QuerySql, EveryOperatorOnTrims) {
    const sc::Endpoint& trims = EP("/api/trims/v2");
    auto sql = q::to_sql(
        {C("year", q::Op::Eq, {std::int64_t{2019}}), C("year", q::Op::Ne, {std::int64_t{2016}}),
         C("year", q::Op::Gt, {std::int64_t{2015}}), C("year", q::Op::Lt, {std::int64_t{2021}}),
         C("msrp", q::Op::Ge, {std::string("10000")}), C("msrp", q::Op::Le, {90000.5}),
         C("make", q::Op::In, {std::string("BMW"), std::string("Audi")}), C("make", q::Op::NotIn, {std::string("Kia")}),
         C("trim", q::Op::Like, {std::string("%Sport%")}), C("trim", q::Op::NotLike, {std::string("Base%")}),
         C("series", q::Op::NotNull), C("invoice", q::Op::IsNull)},
        trims);
    EXPECT_EQ(sql.sql,
              "year = ? AND year != ? AND year > ? AND year < ? AND msrp >= ? AND msrp <= ? AND make COLLATE NOCASE IN (?, ?) AND "
              "make COLLATE NOCASE NOT IN (?) AND trim LIKE ? AND trim NOT LIKE ? AND series IS NOT NULL AND invoice IS NULL");
    EXPECT_EQ(sql.params, (Scalars{std::int64_t{2019}, std::int64_t{2016}, std::int64_t{2015}, std::int64_t{2021},
                                   std::int64_t{10000}, 90000.5, std::string("BMW"), std::string("Audi"),
                                   std::string("Kia"), std::string("%Sport%"), std::string("Base%")}));
    EXPECT_EQ(q::to_sql({}, trims).sql, "");
    EXPECT_TRUE(q::to_sql({}, trims).params.empty());
}

TEST(QuerySql, ColumnsComeFromTheSchema) {
    // Aliased fields use their storage column; dotted fields query the related table.
    EXPECT_EQ(q::to_sql({C("trim_id", q::Op::Eq, {std::int64_t{9}})}, EP("/api/trims/v2")).sql, "id = ?");
    EXPECT_EQ(q::to_sql({C("description", q::Op::Like, {std::string("%4dr%")})}, EP("/api/engines/v2")).sql,
              "trim_description LIKE ?");
    EXPECT_EQ(q::to_sql({C("make_model_trim_id", q::Op::Eq, {std::int64_t{9}})}, EP("/api/bodies")).sql, "trim_id = ?");
    EXPECT_EQ(q::to_sql({C("name", q::Op::Eq, {std::string("Blue")})}, EP("/api/exterior-colors")).sql, "color COLLATE NOCASE = ?");
    auto rel = q::to_sql({C("engines.fuel_type", q::Op::In, {std::string("electric"), std::string("hydrogen")}),
                          C("bodies.type", q::Op::NotNull)},
                         EP("/api/trims/v2"));
    EXPECT_EQ(rel.sql,
              "id IN (SELECT trim_id FROM engines WHERE fuel_type COLLATE NOCASE IN (?, ?)) AND "
              "id IN (SELECT trim_id FROM bodies WHERE type IS NOT NULL)");
    EXPECT_EQ(rel.params, (Scalars{std::string("electric"), std::string("hydrogen")}));
    EXPECT_EQ(q::to_sql({C("year", q::Op::Ge, {std::int64_t{2018}})}, EP("/api/models/v2")).sql,
              "id IN (SELECT model_id FROM trims WHERE year >= ?)");
}

TEST(QuerySql, HostileValuesAreOnlyEverParameters) {
    const sc::Endpoint& trims = EP("/api/trims/v2");
    std::string long_text(8000, 'A');
    long_text.replace(100, 3, "';\"");
    const Scalars hostile = {
        std::string("' OR 1=1 --"),
        std::string("\"; DROP TABLE trims; --"),
        std::string("100% _real_ \\ %"),
        std::string("\xE2\x80\x8F\xF0\x9F\x9A\x97 \xD0\x9B\xD0\xB0\xD0\xB4\xD0\xB0"),
        std::string("\x01\x02\n\r\t"),
        std::string("?"),
        std::string(")) OR ((1=1"),
        std::string(""),
    };
    for (const auto& v : hostile) {
        for (q::Op op : {q::Op::Eq, q::Op::Ne, q::Op::Like, q::Op::NotLike, q::Op::Gt}) {
            auto sql = q::to_sql({C("make", op, {v})}, trims);
            EXPECT_EQ(sql.params, Scalars{v});
            EXPECT_EQ(count_of(sql.sql, '?'), 1u) << sql.sql;
            EXPECT_EQ(sql.sql.find('\''), std::string::npos) << sql.sql;
            EXPECT_EQ(sql.sql.find("OR"), std::string::npos) << sql.sql;
        }
    }
    auto in = q::to_sql({C("trim", q::Op::In, hostile)}, trims);
    EXPECT_EQ(in.sql, "trim COLLATE NOCASE IN (?, ?, ?, ?, ?, ?, ?, ?)");
    EXPECT_EQ(in.params, hostile);
    auto big = q::to_sql({C("description", q::Op::Like, {long_text})}, trims);
    EXPECT_EQ(big.sql, "description LIKE ?");
    EXPECT_EQ(big.params, Scalars{long_text});

    // The same through the parser, from JSON text.
    auto parsed = q::to_sql(q::parse(R"([{"field":"make","op":"=","val":"O'Brien \"x\" %_\\"},)"
                                     R"({"field":"engines.fuel_type","op":"not like","val":"%'--"}])"),
                            trims);
    EXPECT_EQ(parsed.sql, "make COLLATE NOCASE = ? AND id IN (SELECT trim_id FROM engines WHERE fuel_type NOT LIKE ?)");
    EXPECT_EQ(parsed.params, (Scalars{std::string("O'Brien \"x\" %_\\"), std::string("%'--")}));
}

TEST(QuerySql, HostileFieldNamesAndWrongTypesAreRejected) {
    const sc::Endpoint& trims = EP("/api/trims/v2");
    for (const char* f : {"year; DROP TABLE trims", "year OR 1=1", "id", "engines.fuel_type) OR (1", "trims.year", "*"}) {
        Caught e = catch_query_error([&] { (void)q::to_sql({C(f, q::Op::IsNull)}, trims); });
        EXPECT_EQ(e.message, "condition 1 (field " + std::string("\"") + f + "\", op \"is null\"): unknown json field \"" + f +
                                 "\" for /api/trims/v2");
    }
    // Wrong JSON types through the whole path: parse accepts the grammar, to_sql rejects the type.
    auto from_text = [&](const std::string& text) {
        return catch_query_error([&] { (void)q::to_sql(q::parse(text), trims); }).message;
    };
    EXPECT_EQ(from_text(R"([{"field":"year","op":"=","val":"2019; DROP"}])"),
              "condition 1 (field \"year\", op \"=\"): val must be a number for integer field year");
    EXPECT_EQ(from_text(R"([{"field":"year","op":"in","val":[2019,true]}])"),
              "condition 1 (field \"year\", op \"in\"): val[1] must be a number for integer field year");
    EXPECT_EQ(from_text(R"([{"field":"make","op":"=","val":null}])"),
              "condition 1 (field \"make\", op \"=\"): val must not be null; use op \"is null\" or \"not null\"");
    EXPECT_EQ(from_text(R"([{"field":"year","op":"in","val":[[2019]]}])"),
              "condition 1 (field \"year\", op \"in\"): val[0] must be a scalar (string, number, true, false or null), "
              "got an array (at byte 34)");
}
