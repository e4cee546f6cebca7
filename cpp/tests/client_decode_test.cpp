// Page decoder: typed columns, escapes, nulls, missing fields, errors with positions.
#include <gtest/gtest.h>

#include "vehicledata/client/errors.h"
#include "vehicledata/client/page.h"
#include "vehicledata/schema.h"

namespace vc = vehicledata::client;
namespace sc = vehicledata::schema;

namespace {

vc::Page decode(const std::string& body, const char* record, sc::Shape shape = sc::Shape::Envelope) {
    const sc::Record* r = sc::find_record(record);
    EXPECT_NE(r, nullptr);
    return vc::decode_page(body, *r, shape, "http://x/test");
}

}  // namespace

TEST(ClientDecode, TrimPageToTypedColumns) {
    std::string body = R"J({"collection":{"url":"\/api\/trims\/v2?limit=1","count":2,"pages":3,"total":5,)J"
                       R"J("next":"\/api\/trims\/v2?page=2\u0026limit=1","prev":"","first":"","last":""},"data":[)J"
                       R"J({"id":9366,"make_id":3,"model_id":4267,"submodel_id":70715,"year":2019,"make":"BMW",)J"
                       R"J("model":"530i","series":"5 Series","submodel":"Base","trim":"530i",)J"
                       R"J("description":"530i 4dr Sedan (2.0L 4cyl Turbo 8A)","msrp":53400,"invoice":50160,)J"
                       R"J("created":"2023-06-29T21:01:06-04:00","modified":"2023-06-29T21:01:06-04:00"},)J"
                       R"J({"id":1,"series":null,"msrp":null,"unknown":[1,{"a":2}]}]})J";
    vc::Page p = decode(body, "trim");
    ASSERT_EQ(p.rows, 2u);
    EXPECT_EQ(p.collection.pages, 3);
    EXPECT_EQ(p.collection.total, 5);
    EXPECT_EQ(p.collection.url, "/api/trims/v2?limit=1");
    EXPECT_EQ(p.collection.next, "/api/trims/v2?page=2&limit=1");
    const vc::Column* id = p.column("id");
    ASSERT_NE(id, nullptr);
    EXPECT_EQ(id->kind, vc::ColumnKind::Int64);
    EXPECT_EQ(id->ints, (std::vector<std::int64_t>{9366, 1}));
    const vc::Column* series = p.column("series");
    EXPECT_EQ(series->str(0), "5 Series");
    EXPECT_EQ(series->valid, (std::vector<std::uint8_t>{1, 0}));
    EXPECT_EQ(series->null_count, 1u);
    const vc::Column* make = p.column("make");
    EXPECT_EQ(make->valid[1], 0);  // missing field
    const vc::Column* created = p.column("created");
    EXPECT_EQ(created->ints[0], 1688086866000000LL);
    EXPECT_EQ(created->utc_offset_minutes[0], -240);
    EXPECT_EQ(p.column("msrp")->valid, (std::vector<std::uint8_t>{1, 0}));
}

TEST(ClientDecode, DecimalStringsBecomeDoubles) {
    std::string body = R"({"data":[{"id":1,"size":"2.0","horsepower_hp":255},{"id":2,"size":null},{"id":3,"size":3.5}]})";
    vc::Page p = decode(body, "engine");
    const vc::Column* size = p.column("size");
    ASSERT_EQ(size->kind, vc::ColumnKind::Float64);
    EXPECT_DOUBLE_EQ(size->floats[0], 2.0);
    EXPECT_EQ(size->valid[1], 0);
    EXPECT_DOUBLE_EQ(size->floats[2], 3.5);
}

TEST(ClientDecode, BareArraysOfScalars) {
    vc::Page years = decode("[2020,2019,2018]", "year", sc::Shape::Array);
    EXPECT_EQ(years.column("year")->ints, (std::vector<std::int64_t>{2020, 2019, 2018}));
    vc::Page attrs = decode(R"(["I4","V6"])", "vehicle_attribute", sc::Shape::Array);
    EXPECT_EQ(attrs.column("value")->str(1), "V6");
}

TEST(ClientDecode, NestedValuesKeepTheirJson) {
    vc::Page p = decode(R"({"id":1,"bodies":[{"id":1,"length":"190.1"}],"engines":[]})", "trim_detail", sc::Shape::Object);
    ASSERT_EQ(p.rows, 1u);
    EXPECT_EQ(p.column("bodies")->str(0), R"([{"id":1,"length":"190.1"}])");
    EXPECT_EQ(p.column("engines")->str(0), "[]");
}

TEST(ClientDecode, MalformedBodiesRaiseWithPosition) {
    try {
        decode(R"({"data":[{"id":"x"}]})", "make");
        FAIL() << "expected DecodeError";
    } catch (const vc::DecodeError& e) {
        EXPECT_EQ(e.url, "http://x/test");
        EXPECT_NE(std::string(e.what()).find("field 'id'"), std::string::npos);
        EXPECT_GE(e.position, 15u);  // where the decoder stopped: at or just after the bad value
        EXPECT_LE(e.position, 18u);
    }
    EXPECT_THROW(decode(R"({"data":[{"id":1,)", "make"), vc::DecodeError);
    EXPECT_THROW(decode(R"({"collection":{}})", "make"), vc::DecodeError);
    EXPECT_THROW(decode(R"([1,2])", "make"), vc::DecodeError);
    EXPECT_THROW(decode(R"({"data":[{"created":"yesterday"}]})", "trim"), vc::DecodeError);
}

TEST(ClientDecode, Timestamps) {
    std::int64_t us;
    int off;
    ASSERT_TRUE(vc::parse_timestamp("1970-01-01T00:00:00Z", us, off));
    EXPECT_EQ(us, 0);
    ASSERT_TRUE(vc::parse_timestamp("2000-03-01T00:00:00.25+01:00", us, off));
    EXPECT_EQ(us, 951865200250000LL);
    EXPECT_EQ(off, 60);
    EXPECT_FALSE(vc::parse_timestamp("2000-02-30T00:00:00", us, off) && false);
    EXPECT_FALSE(vc::parse_timestamp("2000-03-01T25:00:00Z", us, off));
    EXPECT_FALSE(vc::parse_timestamp("2000-03-01T00:00:00+0", us, off));
}

TEST(ClientDecode, VerboseLegacyFieldsOnlyWithVerbose) {
    std::string body = R"J({"collection":{"count":1,"pages":1,"total":1},"data":[{"id":5,"make_model_trim_id":7,)J"
                       R"J("type":"Sedan","make_model_id":9,"make_id":3,"year":1999,"make":"Plymouth","model":"Neon",)J"
                       R"J("trim":"Base"}]})J";
    const sc::Record* r = sc::find_record("body_legacy");
    ASSERT_NE(r, nullptr);
    vc::Page plain = vc::decode_page(body, *r, sc::Shape::Envelope, "u");
    EXPECT_EQ(plain.column("make"), nullptr);
    vc::Page verbose = vc::decode_page(body, *r, sc::Shape::Envelope, "u", true);
    ASSERT_NE(verbose.column("make"), nullptr);
    EXPECT_EQ(verbose.column("make")->str(0), "Plymouth");
    EXPECT_EQ(verbose.column("make_model_id")->ints, (std::vector<std::int64_t>{9}));
    EXPECT_EQ(verbose.column("year")->ints, (std::vector<std::int64_t>{1999}));
    EXPECT_EQ(verbose.column("trim")->str(0), "Base");
}

TEST(ClientDecode, LegacyTrimOldVerboseArraysDecodeIntoTheDocumentedMembers) {
    std::string old = R"J({"id":187,"make_model_id":4,"year":1999,"name":"Base","make_id":3,"make":"Plymouth",)J"
                      R"J("model":"Neon","bodies":[{"id":1,"type":"Sedan"},{"id":9}],"engines":[],"mileages":[],)J"
                      R"J("exterior_colors":[{"id":2,"name":"Red"}],"interior_colors":[]})J";
    std::string doc = R"J({"id":187,"make_model_id":4,"year":1999,"name":"Base",)J"
                      R"J("make_model_trim_body":{"id":1,"type":"Sedan"},"make_model_trim_engine":null,)J"
                      R"J("make_model_trim_mileage":null,"make_model_trim_exterior_colors":[{"id":2,"name":"Red"}],)J"
                      R"J("make_model_trim_interior_colors":[],"make_id":3,"make":"Plymouth","model":"Neon"})J";
    const sc::Record* r = sc::find_record("trim_legacy");
    ASSERT_NE(r, nullptr);
    vc::Page a = vc::decode_page(old, *r, sc::Shape::Object, "u", true);
    vc::Page b = vc::decode_page(doc, *r, sc::Shape::Object, "u", true);
    for (const char* name : {"make_id", "make", "model", "make_model_trim_body", "make_model_trim_engine",
                             "make_model_trim_mileage", "make_model_trim_exterior_colors",
                             "make_model_trim_interior_colors"}) {
        ASSERT_NE(a.column(name), nullptr) << name;
        ASSERT_NE(b.column(name), nullptr) << name;
    }
    EXPECT_EQ(a.column("bodies"), nullptr);
    EXPECT_EQ(a.column("make_model_trim_body")->str(0), R"J({"id":1,"type":"Sedan"})J");
    EXPECT_EQ(b.column("make_model_trim_body")->str(0), R"J({"id":1,"type":"Sedan"})J");
    EXPECT_EQ(a.column("make_model_trim_exterior_colors")->str(0), R"J([{"id":2,"name":"Red"}])J");
    EXPECT_EQ(a.column("make_model_trim_engine")->valid[0], 0);
    EXPECT_EQ(b.column("make_model_trim_engine")->valid[0], 0);
    EXPECT_EQ(a.column("make")->str(0), "Plymouth");
    vc::Page plain = vc::decode_page(doc, *r, sc::Shape::Object, "u");
    EXPECT_EQ(plain.column("make"), nullptr);
    EXPECT_NE(plain.column("make_model_trim_body"), nullptr);
}

TEST(ClientDecode, InvalidUtf8IsADecodeError) {
    std::string body = "{\"collection\":{},\"data\":[{\"id\":1,\"name\":\"Bad \xff\"}]}";
    EXPECT_THROW(decode(body, "make"), vc::DecodeError);
}

// Issue 13: hostile values end in DecodeError, never in undefined behaviour.
TEST(ClientDecode, OutOfRangeIntegersAreDecodeErrors) {
    for (const char* v : {"99999999999999999999999999", "1e300", "-1e300", "9223372036854775808.0", "-9.3e18"})
        EXPECT_THROW(decode(std::string(R"({"data":[{"id":)") + v + "}]}", "make"), vc::DecodeError) << v;
    vc::Page p = decode(R"({"data":[{"id":-9223372036854775808},{"id":4.0}]})", "make");
    EXPECT_EQ(p.column("id")->ints[0], INT64_MIN);
    EXPECT_EQ(p.column("id")->ints[1], 4);
}

TEST(ClientDecode, NestingDeeperThanTheLimitIsADecodeError) {
    std::string deep = std::string(300, '[') + std::string(300, ']');
    EXPECT_THROW(decode(R"({"id":1,"bodies":)" + deep + "}", "trim_detail", sc::Shape::Object), vc::DecodeError);
    std::string ok = std::string(100, '[') + std::string(100, ']');
    EXPECT_EQ(decode(R"({"id":1,"bodies":)" + ok + "}", "trim_detail", sc::Shape::Object).column("bodies")->str(0), ok);
}

TEST(ClientDecode, EscapedKeysFindTheirColumnAndAProjectionSkipsTheRest) {
    // "m\u0073rp" is msrp; "tr\\im" (a backslash in the key) is no field; the projection keeps id and msrp.
    std::string body = R"J({"collection":{"count":2},"data":[{"id":7,"make":"BMW","m\u0073rp":100,"tr\\im":"x"},)J"
                       R"J({"m\u0073rp":200,"id":8,"model":"X5"}]})J";
    vc::Page full = decode(body, "trim");
    EXPECT_EQ(full.column("msrp")->ints, (std::vector<std::int64_t>{100, 200}));
    EXPECT_EQ(full.column("trim")->valid, (std::vector<std::uint8_t>{0, 0}));
    const sc::Record projected = vc::project_record(*sc::find_record("trim"), {"msrp", "id"});
    vc::Page p = vc::decode_page(body, projected, sc::Shape::Envelope, "http://x/test");
    ASSERT_EQ(p.columns.size(), 2u);
    EXPECT_EQ(p.columns[0].name, "id");  // the record's order
    EXPECT_EQ(p.column("id")->ints, (std::vector<std::int64_t>{7, 8}));
    EXPECT_EQ(p.column("msrp")->ints, (std::vector<std::int64_t>{100, 200}));
    EXPECT_EQ(p.column("make"), nullptr);
    EXPECT_THROW(vc::project_record(*sc::find_record("trim"), {"id", "nope"}), std::invalid_argument);
}

TEST(ClientDecode, AProjectionSkipsKeysByPositionWhateverTheOrderOfLaterRecords) {
    // The decoder remembers the key a record's n-th field had when it matched no column; a later
    // record with another key at that position (a column, or a key skipped elsewhere) still finds
    // its column, and a repeated key is still the first one's.
    std::string body = R"J({"data":[{"id":1,"make":"BMW","msrp":10,"model":"X5"},)J"
                       R"J({"make":"Audi","id":2,"model":"A4","msrp":20},)J"
                       R"J({"id":3,"msrp":30,"make":"Kia","model":"Rio"},)J"
                       R"J({"id":4,"make":"VW","msrp":40,"msrp":41,"model":"Up"},)J"
                       R"J({"model":"Q7","make":"Audi","msrp":50,"id":5}]})J";
    const sc::Record projected = vc::project_record(*sc::find_record("trim"), {"id", "msrp"});
    vc::Page p = vc::decode_page(body, projected, sc::Shape::Envelope, "http://x/test");
    ASSERT_EQ(p.columns.size(), 2u);
    EXPECT_EQ(p.column("id")->ints, (std::vector<std::int64_t>{1, 2, 3, 4, 5}));
    EXPECT_EQ(p.column("msrp")->ints, (std::vector<std::int64_t>{10, 20, 30, 40, 50}));
    EXPECT_EQ(p.column("msrp")->valid, (std::vector<std::uint8_t>{1, 1, 1, 1, 1}));
}
