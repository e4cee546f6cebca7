// Page concatenation and the merged page of a crawl: the rows and values kept, and the buffers
// reserved once (no regrowth: a regrown column is resident twice while it is copied).
#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "vehicledata/client/page.h"
#include "vehicledata/schema.h"

namespace vc = vehicledata::client;
namespace sc = vehicledata::schema;

namespace {

// An envelope of `n` trims from id `first_id` whose descriptions are `desc_len` bytes long.
std::string trims_body(int n, int first_id, std::size_t desc_len) {
    std::string body = R"({"collection":{"url":"","count":)" + std::to_string(n) +
                       R"(,"pages":3,"total":30,"next":"","prev":"","first":"","last":""},"data":[)";
    for (int i = 0; i < n; ++i) {
        const int id = first_id + i;
        const std::string desc = std::to_string(id) + " " + std::string(desc_len, 'd');
        body += std::string(i ? "," : "") + R"({"id":)" + std::to_string(id) + R"(,"make_id":3,"model_id":4267,)" +
                R"("submodel_id":70715,"year":2019,"make":"BMW number )" + std::to_string(id) +
                R"(","model":"530i xDrive","series":"5 Series Gran Turismo","submodel":"Base model","trim":"530i xDrive",)" +
                R"("description":")" + desc.substr(0, desc_len) + R"(","msrp":53400,"invoice":50160,)" +
                R"("created":"2023-06-29T21:01:06-04:00","modified":"2023-06-29T21:01:06-04:00"})";
    }
    return body + "]}";
}

vc::Page decode(const std::string& body) {
    const sc::Record* r = sc::find_record("trim");
    EXPECT_NE(r, nullptr);
    return vc::decode_page(body, *r, sc::Shape::Envelope, "http://x/test");
}

bool stringy(const vc::Column& c) { return c.kind == vc::ColumnKind::String || c.kind == vc::ColumnKind::Json; }

}  // namespace

TEST(ClientPageOps, ConcatKeepsEveryRowInOrderAndReservesExactly) {
    vc::Page a = decode(trims_body(10, 1, 40)), b = decode(trims_body(10, 11, 60)), c = decode(trims_body(7, 21, 50));
    const std::string a_desc(a.column("description")->str(3)), c_desc(c.column("description")->str(6));
    vc::Page all = vc::concat_pages({&a, &b, &c});
    ASSERT_EQ(all.rows, 27u);
    std::vector<std::int64_t> ids;
    for (std::int64_t i = 1; i <= 27; ++i) ids.push_back(i);
    EXPECT_EQ(all.column("id")->ints, ids);
    EXPECT_EQ(all.column("description")->str(3), a_desc);
    EXPECT_EQ(all.column("description")->str(26), c_desc);
    EXPECT_EQ(all.column("make")->str(12), "BMW number 13");
    EXPECT_EQ(a.rows + b.rows + c.rows, 0u);  // the sources are emptied
    for (const auto& col : all.columns) {
        SCOPED_TRACE(col.name);
        EXPECT_EQ(col.valid.capacity(), col.valid.size());
        if (stringy(col)) {
            EXPECT_EQ(col.offsets.capacity(), col.offsets.size());
            EXPECT_EQ(col.bytes.capacity(), col.bytes.size());
        } else if (col.kind == vc::ColumnKind::Float64) {
            EXPECT_EQ(col.floats.capacity(), col.floats.size());
        } else {
            EXPECT_EQ(col.ints.capacity(), col.ints.size());
            if (col.kind == vc::ColumnKind::Timestamp) EXPECT_EQ(col.utc_offset_minutes.capacity(), col.utc_offset_minutes.size());
        }
    }
}

TEST(ClientPageOps, MergedPageHoldsLongerLaterTextWithoutRegrowing) {
    // As Client::collect_pages: the merged page reserved from the first page for the announced
    // total; later pages with a fifth longer text must fit in the buffers reserved at the start.
    vc::Page first = decode(trims_body(10, 1, 40));
    vc::Page merged = vc::empty_like(first, 30);
    std::vector<const void*> buffers;
    for (const auto& col : merged.columns)
        buffers.push_back(stringy(col) ? static_cast<const void*>(col.bytes.data()) : static_cast<const void*>(col.valid.data()));
    vc::append_page(merged, std::move(first));
    vc::append_page(merged, decode(trims_body(10, 11, 48)));
    vc::append_page(merged, decode(trims_body(10, 21, 48)));
    ASSERT_EQ(merged.rows, 30u);
    EXPECT_EQ(merged.column("id")->ints.back(), 30);
    EXPECT_EQ(merged.column("description")->str(29), "30 " + std::string(45, 'd'));
    for (std::size_t k = 0; k < merged.columns.size(); ++k) {
        const auto& col = merged.columns[k];
        SCOPED_TRACE(col.name);
        EXPECT_EQ(stringy(col) ? static_cast<const void*>(col.bytes.data()) : static_cast<const void*>(col.valid.data()),
                  buffers[k]);
        EXPECT_EQ(col.valid.capacity(), 30u);
    }
}

TEST(ClientPageOps, TheDecoderServesSmallPagesAfterABigOne) {
    // A body over the parser's kept capacity (4 MiB) releases its buffers after the page; the
    // thread's next decodes allocate afresh and give the same records.
    vc::Page big = decode(trims_body(12000, 1, 300));
    ASSERT_EQ(big.rows, 12000u);
    EXPECT_EQ(big.column("id")->ints.back(), 12000);
    vc::Page small = decode(trims_body(3, 7, 40));
    ASSERT_EQ(small.rows, 3u);
    EXPECT_EQ(small.column("description")->str(2), "9 " + std::string(38, 'd'));
    vc::Page again = decode(trims_body(12000, 1, 300));
    EXPECT_EQ(again.column("description")->str(11999), big.column("description")->str(11999));
}

TEST(ClientPageOps, SyntheticFieldsParseAndMergeOnAppend) {
    EXPECT_EQ(vc::synthetic_fields("msrp,invoice"), (std::vector<std::string>{"msrp", "invoice"}));
    EXPECT_EQ(vc::synthetic_fields(" msrp , engines.valves,,\t"), (std::vector<std::string>{"msrp", "engines.valves"}));
    EXPECT_TRUE(vc::synthetic_fields("").empty());
    vc::Page a = decode(trims_body(2, 1, 10)), b = decode(trims_body(2, 3, 10)), c = decode(trims_body(1, 5, 10));
    a.synthetic = {"msrp"};
    b.synthetic = {"invoice", "msrp"};
    vc::Page all = vc::concat_pages({&a, &b, &c});  // the union, in order of first appearance
    EXPECT_EQ(all.synthetic, (std::vector<std::string>{"msrp", "invoice"}));
    vc::Page acc = vc::empty_like(all, 10);
    EXPECT_EQ(acc.synthetic, all.synthetic);
}

namespace {

// An Int64 column of `values` (nullopt: a null).
vc::Column ints(const std::string& name, const std::vector<std::optional<std::int64_t>>& values) {
    vc::Column c;
    c.name = name;
    c.type = sc::Type::Int64;
    c.kind = vc::ColumnKind::Int64;
    for (const auto& v : values) {
        c.ints.push_back(v.value_or(0));
        c.valid.push_back(v ? 1 : 0);
        c.null_count += v ? 0 : 1;
    }
    return c;
}

}  // namespace

TEST(ClientPageOps, MatchRowsFindsTheFirstRowOfEachKeyAndNoneForNullsOrMissingKeys) {
    // Keys far apart (ids of another catalogue) and many colliding ones: the table probes on.
    std::vector<std::optional<std::int64_t>> lookup_values = {7, std::nullopt, 9000000000LL, 7, -3, 42};
    for (std::int64_t i = 0; i < 1000; ++i) lookup_values.push_back(100000 + i * 1024);
    const vc::Column lookup = ints("trim_id", lookup_values);
    const vc::Column keys = ints("id", {42, 7, std::nullopt, 8, 9000000000LL, -3, 100000 + 999 * 1024, 0});
    EXPECT_EQ(vc::match_rows(keys, lookup), (std::vector<std::int64_t>{5, 0, -1, -1, 2, 4, 1005, -1}));
    EXPECT_EQ(vc::match_rows(keys, ints("trim_id", {})), std::vector<std::int64_t>(8, -1));
    vc::Column text = lookup;
    text.kind = vc::ColumnKind::String;
    EXPECT_THROW(vc::match_rows(keys, text), std::invalid_argument);
}

TEST(ClientPageOps, JoinColumnsKeepsTheLeftRowsAndGathersEachRightSide) {
    vc::Page trims = decode(trims_body(5, 1, 12));
    vc::Page part;  // rows for trims 4, 2, 4 again (the first one is taken) and 99 (no trim)
    part.record = "part";
    part.rows = 4;
    part.columns.push_back(ints("trim_id", {4, 2, 4, 99}));
    part.columns.push_back(ints("id", {40, 20, 41, 990}));
    vc::Page empty;
    empty.record = "empty";
    empty.columns.push_back(ints("trim_id", {}));
    empty.columns.push_back(ints("id", {}));
    vc::Page out = vc::join_columns(trims, "id", {"id", "description"}, {"id", "description"},
                                    {{&part, "trim_id", {"id"}, {"part_id"}}, {&empty, "trim_id", {"id"}, {"empty_id"}}},
                                    "vehicle");
    ASSERT_EQ(out.rows, 5u);
    EXPECT_EQ(out.record, "vehicle");
    EXPECT_EQ(out.column("id")->ints, (std::vector<std::int64_t>{1, 2, 3, 4, 5}));
    EXPECT_EQ(out.column("description")->str(4), trims.column("description")->str(4));
    const vc::Column* p = out.column("part_id");
    EXPECT_EQ(p->valid, (std::vector<std::uint8_t>{0, 1, 0, 1, 0}));
    EXPECT_EQ(p->ints[1], 20);
    EXPECT_EQ(p->ints[3], 40);
    EXPECT_EQ(p->null_count, 3u);
    EXPECT_EQ(out.column("empty_id")->null_count, 5u);
    EXPECT_THROW(vc::join_columns(trims, "nope", {}, {}, {}, "vehicle"), std::invalid_argument);
    EXPECT_THROW(vc::join_columns(trims, "id", {}, {}, {{&part, "nope", {"id"}, {"x"}}}, "vehicle"), std::invalid_argument);
}

TEST(ClientPageOps, JoinColumnsOfAPartInTheLeftOrderCopiesItsColumnsWhole) {
    vc::Page trims = decode(trims_body(4, 1, 12));
    vc::Page part;  // one row per trim, in the trims' order, with nulls
    part.record = "part";
    part.rows = 4;
    part.columns.push_back(ints("trim_id", {1, 2, 3, 4}));
    part.columns.push_back(ints("doors", {2, std::nullopt, 4, std::nullopt}));
    vc::Page odd = part;  // a null slot holding a value: gathered row by row, the slot zeroed
    odd.columns[1].ints[1] = 7;
    vc::Page out = vc::join_columns(trims, "id", {"id"}, {"id"},
                                    {{&part, "trim_id", {"doors"}, {"doors"}}, {&odd, "trim_id", {"doors"}, {"odd"}}},
                                    "vehicle");
    for (const char* name : {"doors", "odd"}) {
        SCOPED_TRACE(name);
        const vc::Column* c = out.column(name);
        EXPECT_EQ(c->valid, (std::vector<std::uint8_t>{1, 0, 1, 0}));
        EXPECT_EQ(c->ints, (std::vector<std::int64_t>{2, 0, 4, 0}));
        EXPECT_EQ(c->null_count, 2u);
    }
}
