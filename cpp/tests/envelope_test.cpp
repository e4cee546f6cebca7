// The wire envelope (vehicledata/envelope.h): writer -> reader round trips of the
// collection block and the error body, exact bytes, the schema records they follow,
// and malformed error bodies.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <set>
#include <string>

#include "vehicledata/client/errors.h"
#include "vehicledata/client/page.h"
#include "vehicledata/envelope.h"
#include "vehicledata/schema.h"

namespace ve = vehicledata::envelope;
namespace vc = vehicledata::client;
namespace sc = vehicledata::schema;

namespace {

ve::Collection sample_collection() {
    ve::Collection c;
    c.url = "/api/makes/v2?year=2019&make=B%C3%A9";
    c.count = 2;
    c.pages = 7;
    c.total = 13;
    c.next = "/api/makes/v2?year=2019&page=3&limit=2";
    c.prev = "/api/makes/v2?year=2019&page=1&limit=2";
    c.first = "/api/makes/v2?year=2019&page=1&limit=2";
    c.last = "/api/makes/v2?year=2019&page=7&limit=2";
    return c;
}

vc::Page decode_makes(const std::string& body) {
    return vc::decode_page(body, *sc::find_record("make"), sc::Shape::Envelope, "http://x/test");
}

}  // namespace

TEST(Envelope, CollectionBytesAreTheServicesOrderAndEscapes) {
    ve::Collection c;
    c.url = "/api/trims/v2?a=1&b=2";
    c.count = 0;
    c.pages = 1;
    std::string out;
    ve::begin_collection(out, c);
    ve::end_collection(out);
    EXPECT_EQ(out, R"({"collection":{"url":"\/api\/trims\/v2?a=1\u0026b=2","count":0,"pages":1,"total":0,)"
                   R"("next":"","prev":"","first":"","last":""},"data":[]})");
}

TEST(Envelope, CollectionRoundTripsThroughThePageDecoder) {
    const ve::Collection c = sample_collection();
    std::string body;
    ve::begin_collection(body, c);
    body.append(R"({"id":1,"name":"BMW"},{"id":2,"name":"Buick"})");
    ve::end_collection(body);
    const vc::Page p = decode_makes(body);
    EXPECT_TRUE(p.collection.present);
    EXPECT_EQ(p.rows, 2u);
    for (const auto& m : ve::kCollectionMembers) {
        SCOPED_TRACE(std::string(m.name));
        if (m.text) EXPECT_EQ(p.collection.*m.text, c.*m.text);
        else EXPECT_EQ(p.collection.*m.number, c.*m.number);
    }
}

TEST(Envelope, CollectionReaderSkipsUnknownKeysAndNulls) {
    const vc::Page p = decode_makes(R"({"collection":{"total":4,"extra":{"a":[1]},"next":null,"pages":2},"data":[]})");
    EXPECT_TRUE(p.collection.present);
    EXPECT_EQ(p.collection.total, 4);
    EXPECT_EQ(p.collection.pages, 2);
    EXPECT_EQ(p.collection.next, "");
    EXPECT_EQ(ve::collection_member("extra"), nullptr);
    ASSERT_NE(ve::collection_member("next"), nullptr);
    EXPECT_EQ(ve::collection_member("next")->text, &ve::Collection::next);
    EXPECT_THROW(decode_makes(R"({"collection":{"count":"2"},"data":[]})"), vc::DecodeError);
    EXPECT_THROW(decode_makes(R"({"collection":{"url":3},"data":[]})"), vc::DecodeError);
    EXPECT_THROW(decode_makes(R"({"collection":[],"data":[]})"), vc::DecodeError);
}

TEST(Envelope, MembersFollowTheSchemaRecords) {
    // The writer's order and the reader's names are the schema table's records.
    const auto check = [](const char* record, const auto& members) {
        const sc::Record* r = sc::find_record(record);
        ASSERT_NE(r, nullptr) << record;
        ASSERT_EQ(r->fields.size(), std::size(members)) << record;
        for (std::size_t i = 0; i < std::size(members); ++i) {
            EXPECT_EQ(r->fields[i].name, members[i].name) << record;
            const bool number = r->fields[i].type == sc::Type::Int || r->fields[i].type == sc::Type::Int64;
            EXPECT_EQ(members[i].number != nullptr, number) << record << "." << members[i].name;
            EXPECT_EQ(members[i].text != nullptr, !number) << record << "." << members[i].name;
        }
    };
    check("collection", ve::kCollectionMembers);
    check("error", ve::kErrorMembers);
    EXPECT_NO_THROW(ve::check_schema());
}

TEST(Envelope, ErrorBodyBytesAndRoundTrip) {
    const ve::ErrorBody e{ve::kNotFound, 404, "/api/trims/v2", "Page 9 is past the last page (6) of this search"};
    const std::string json = ve::error_json(e);
    EXPECT_EQ(json, R"({"exception":"NotFoundException","code":404,"url":"\/api\/trims\/v2",)"
                    R"("message":"Page 9 is past the last page (6) of this search"})");
    const ve::ErrorBody back = ve::read_error(json, "application/json");
    EXPECT_EQ(back.exception, e.exception);
    EXPECT_EQ(back.code, e.code);
    EXPECT_EQ(back.url, e.url);
    EXPECT_EQ(back.message, e.message);
    // Without a JSON content type, a body starting with '{' is still read as JSON.
    EXPECT_EQ(ve::read_error("\n " + json, "text/html").code, 404);
}

TEST(Envelope, DeprecatedAndTextBodies) {
    const ve::ErrorBody d{ve::kDeprecated, 403, "", "This endpoint is being deprecated. Use /api/trims/v2 instead."};
    EXPECT_EQ(ve::deprecated_json(d), R"({"exception":"DeprecatedException","message":"This endpoint is being )"
                                      R"(deprecated. Use \/api\/trims\/v2 instead.","code":403})");
    const ve::ErrorBody back = ve::read_error(ve::deprecated_json(d), "application/json");
    EXPECT_EQ(back.exception, ve::kDeprecated);
    EXPECT_EQ(back.code, 403);
    EXPECT_EQ(back.url, "");
    EXPECT_EQ(back.message, d.message);

    const ve::ErrorBody rate{ve::kTooManyRequests, 429, "/api/auth/login",
                             std::string(ve::kTooManyRequests) + " - Max Per Minute: 20\n"};
    EXPECT_EQ(ve::error_text(rate), rate.message);
    const ve::ErrorBody t = ve::read_error(ve::error_text(rate), "text/plain; charset=UTF-8");
    EXPECT_EQ(t.exception, ve::kTooManyRequests);
    EXPECT_EQ(t.message, std::string(ve::kTooManyRequests) + " - Max Per Minute: 20");
    EXPECT_EQ(t.code, 0);
    EXPECT_EQ(ve::error_text(ve::ErrorBody{"", 400, "", "bad \xff"}), "bad \xef\xbf\xbd");
}

TEST(Envelope, MalformedErrorBodiesBecomeTextMessages) {
    // Truncated JSON: the text itself is the message, no exception name.
    auto e = ve::read_error(R"({"exception":"BadRequestException","mess)", "application/json");
    EXPECT_EQ(e.exception, "");
    EXPECT_EQ(e.message, R"({"exception":"BadRequestException","mess)");
    // Members of the wrong type are not taken; with neither exception nor message the body is text.
    e = ve::read_error(R"({"exception":5,"code":"400","message":["x"]})", "application/json");
    EXPECT_EQ(e.exception, "");
    EXPECT_EQ(e.code, 0);
    EXPECT_EQ(e.message, R"({"exception":5,"code":"400","message":["x"]})");
    e = ve::read_error(R"({"exception":"BadRequestException","code":"400","url":7})", "application/json");
    EXPECT_EQ(e.exception, "BadRequestException");
    EXPECT_EQ(e.code, 0);
    EXPECT_EQ(e.url, "");
    EXPECT_EQ(e.message, "");
    // JSON that is not an object, and an empty body.
    e = ve::read_error("[\"NotFoundException\"]", "application/json");
    EXPECT_EQ(e.exception, "");
    EXPECT_EQ(e.message, "[\"NotFoundException\"]");
    e = ve::read_error("", "application/json");
    EXPECT_EQ(e.exception, "");
    EXPECT_EQ(e.message, "");
    // A long body is cut to 1000 bytes; text that merely contains " - " names no exception.
    e = ve::read_error(std::string(5000, 'x'), "text/plain");
    EXPECT_EQ(e.message.size(), 1000u);
    e = ve::read_error("Bad gateway - upstream", "text/plain");
    EXPECT_EQ(e.exception, "");
    // Ill-formed UTF-8 becomes U+FFFD in every member.
    e = ve::read_error("{\"exception\":\"X\xff" "Exception\",\"url\":\"/\xc3\",\"message\":\"m\"}", "application/json");
    EXPECT_EQ(e.exception, "X\xef\xbf\xbd" "Exception");
    EXPECT_EQ(e.url, "/\xef\xbf\xbd");
}

TEST(Envelope, ExceptionNames) {
    const auto& names = ve::exception_names();
    EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
    for (const std::string n : names) EXPECT_EQ(n.rfind("Exception"), n.size() - 9) << n;
    EXPECT_STREQ(ve::exception_for(400), ve::kBadRequest);
    EXPECT_STREQ(ve::exception_for(404), "NotFoundException");
    EXPECT_STREQ(ve::exception_for(503), ve::kServiceUnavailable);
    EXPECT_STREQ(ve::exception_for(418), ve::kHttp);
    for (int status = 400; status < 600; ++status) {
        const std::string n = ve::exception_for(status);
        EXPECT_NE(std::find(names.begin(), names.end(), std::string_view(n)), names.end()) << status;
    }
}
