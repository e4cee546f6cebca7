// Arrow C Data Interface export of decoded pages: formats, buffers, bitmaps, release callbacks.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "vehicledata/client/arrow_export.h"
#include "vehicledata/client/page.h"
#include "vehicledata/format.h"
#include "vehicledata/schema.h"

namespace vc = vehicledata::client;
namespace sc = vehicledata::schema;

namespace {

std::shared_ptr<const vc::Page> decode(const std::string& body, const char* record,
                                       sc::Shape shape = sc::Shape::Array) {
    const sc::Record* r = sc::find_record(record);
    EXPECT_NE(r, nullptr);
    return std::make_shared<vc::Page>(vc::decode_page(body, *r, shape, "http://x/test"));
}

int child_index(const ArrowSchema& s, const char* name) {
    for (std::int64_t i = 0; i < s.n_children; ++i)
        if (std::strcmp(s.children[i]->name, name) == 0) return static_cast<int>(i);
    return -1;
}

bool bit(const void* buf, std::int64_t i) {
    return (static_cast<const std::uint8_t*>(buf)[i >> 3] >> (i & 7)) & 1;
}

// Two trims: every type of column once with a value and once null.
const char* kTrims =
    R"J([{"id":9366,"year":2019,"make":"BMW","msrp":53400,"created":"2023-06-29T21:01:06-04:00",)J"
    R"J("engines":[{"engine_type":"gas","size":"2.0"}]},)J"
    R"J({"id":1,"make":null,"msrp":null,"created":null}])J";

}  // namespace

TEST(ClientArrow, SchemaFormatsNamesAndRelease) {
    auto page = decode(kTrims, "trim_detail");
    ArrowSchema s;
    vc::export_schema(*page, &s);
    ASSERT_NE(s.release, nullptr);
    EXPECT_STREQ(s.format, "+s");
    ASSERT_EQ(s.n_children, static_cast<std::int64_t>(page->columns.size()));
    for (std::int64_t i = 0; i < s.n_children; ++i) {
        EXPECT_EQ(s.children[i]->name, page->columns[i].name);
        EXPECT_EQ(s.children[i]->flags, ARROW_FLAG_NULLABLE);
        EXPECT_NE(s.children[i]->release, nullptr);
    }
    EXPECT_STREQ(s.children[child_index(s, "id")]->format, "l");
    EXPECT_STREQ(s.children[child_index(s, "make")]->format, "U");
    EXPECT_STREQ(s.children[child_index(s, "created")]->format, "tsu:UTC");
    EXPECT_STREQ(s.children[child_index(s, "engines")]->format, "U");
    // A consumer may move a child out and release it first; the parent then skips it.
    ArrowSchema moved = *s.children[0];
    s.children[0]->release = nullptr;
    moved.release(&moved);
    EXPECT_EQ(moved.release, nullptr);
    s.release(&s);
    EXPECT_EQ(s.release, nullptr);
}

TEST(ClientArrow, ArrayBuffersViewThePageAndBitmapsMarkNulls) {
    auto page = decode(kTrims, "trim_detail");
    ArrowSchema s;
    vc::export_schema(*page, &s);
    ArrowArray a;
    vc::export_array(page, &a);
    EXPECT_EQ(page.use_count(), 2 + static_cast<long>(page->columns.size()));  // the struct and each child
    ASSERT_EQ(a.length, 2);
    EXPECT_EQ(a.n_buffers, 1);
    EXPECT_EQ(a.buffers[0], nullptr);

    const ArrowArray& id = *a.children[child_index(s, "id")];
    EXPECT_EQ(id.null_count, 0);
    EXPECT_EQ(id.buffers[0], nullptr);  // no nulls: no bitmap
    EXPECT_EQ(id.buffers[1], page->column("id")->ints.data());  // not copied
    EXPECT_EQ(static_cast<const std::int64_t*>(id.buffers[1])[0], 9366);

    const ArrowArray& make = *a.children[child_index(s, "make")];
    ASSERT_EQ(make.n_buffers, 3);
    EXPECT_EQ(make.null_count, 1);
    EXPECT_TRUE(bit(make.buffers[0], 0));
    EXPECT_FALSE(bit(make.buffers[0], 1));
    const auto* offsets = static_cast<const std::int64_t*>(make.buffers[1]);
    EXPECT_EQ(std::string(static_cast<const char*>(make.buffers[2]) + offsets[0], offsets[1] - offsets[0]), "BMW");

    const ArrowArray& msrp = *a.children[child_index(s, "msrp")];
    EXPECT_EQ(msrp.null_count, 1);
    EXPECT_FALSE(bit(msrp.buffers[0], 1));

    const ArrowArray& created = *a.children[child_index(s, "created")];
    EXPECT_EQ(static_cast<const std::int64_t*>(created.buffers[1])[0], 1688086866000000);  // 2023-06-30T01:01:06Z
    EXPECT_FALSE(bit(created.buffers[0], 1));

    const ArrowArray& engine = *a.children[child_index(s, "engines")];
    const auto* eo = static_cast<const std::int64_t*>(engine.buffers[1]);
    EXPECT_EQ(std::string(static_cast<const char*>(engine.buffers[2]) + eo[0], eo[1] - eo[0]),
              R"J([{"engine_type":"gas","size":"2.0"}])J");
    EXPECT_FALSE(bit(engine.buffers[0], 1));

    a.release(&a);
    EXPECT_EQ(a.release, nullptr);
    EXPECT_EQ(page.use_count(), 1);  // every child released with its parent: nothing leaked
    s.release(&s);
}

TEST(ClientArrow, MovedChildOutlivesItsParent) {
    auto page = decode(kTrims, "trim_detail");
    ArrowArray a;
    vc::export_array(page, &a);
    ArrowArray child = *a.children[0];
    a.children[0]->release = nullptr;
    a.release(&a);
    EXPECT_EQ(page.use_count(), 2);  // the moved child still holds the page
    EXPECT_EQ(static_cast<const std::int64_t*>(child.buffers[1])[0], 9366);
    child.release(&child);
    EXPECT_EQ(page.use_count(), 1);
}

TEST(ClientArrow, BoolsAreBitPackedAndDatesAreDays) {
    // Bool and date columns: the drivetrain record has neither, so use a synthetic page.
    vc::Page p;
    p.record = "synthetic";
    p.rows = 10;
    vc::Column b;
    b.name = "flag";
    b.type = sc::Type::Bool;
    b.kind = vc::ColumnKind::Bool;
    vc::Column d;
    d.name = "day";
    d.type = sc::Type::Date;
    d.kind = vc::ColumnKind::String;
    for (int i = 0; i < 10; ++i) {
        b.ints.push_back(i % 3 == 0);
        b.valid.push_back(i != 4);
        std::string text = i == 7 ? "" : "2024-02-" + std::string(i < 9 ? "0" : "") + std::to_string(i + 1);
        d.bytes += text;
        d.offsets.push_back(static_cast<std::int64_t>(d.bytes.size()));
        d.valid.push_back(i != 7);
    }
    b.null_count = 1;
    d.null_count = 1;
    p.columns = {b, d};
    auto page = std::make_shared<const vc::Page>(p);
    ArrowSchema s;
    vc::export_schema(*page, &s);
    EXPECT_STREQ(s.children[0]->format, "b");
    EXPECT_STREQ(s.children[1]->format, "tdD");
    ArrowArray a;
    vc::export_array(page, &a);
    for (int i = 0; i < 10; ++i) {
        EXPECT_EQ(bit(a.children[0]->buffers[1], i), i % 3 == 0) << i;
        EXPECT_EQ(bit(a.children[0]->buffers[0], i), i != 4) << i;
        EXPECT_EQ(bit(a.children[1]->buffers[0], i), i != 7) << i;
    }
    const auto* days = static_cast<const std::int32_t*>(a.children[1]->buffers[1]);
    EXPECT_EQ(days[0], vehicledata::format::days_from_civil(2024, 2, 1));
    EXPECT_EQ(days[9], vehicledata::format::days_from_civil(2024, 2, 10));
    a.release(&a);
    s.release(&s);
    EXPECT_EQ(page.use_count(), 1);
}

TEST(ClientArrow, MalformedDateThrowsAndLeaksNothing) {
    vc::Page p;
    p.rows = 1;
    vc::Column id;
    id.name = "id";
    id.type = sc::Type::Int64;
    id.kind = vc::ColumnKind::Int64;
    id.ints = {1};
    id.valid = {1};
    vc::Column d;
    d.name = "day";
    d.type = sc::Type::Date;
    d.kind = vc::ColumnKind::String;
    d.bytes = "2024-02-30";
    d.offsets = {0, 10};
    d.valid = {1};
    p.columns = {id, d};
    auto page = std::make_shared<const vc::Page>(p);
    ArrowArray a;
    a.release = nullptr;
    EXPECT_THROW(vc::export_array(page, &a), std::invalid_argument);
    EXPECT_EQ(a.release, nullptr);
    EXPECT_EQ(page.use_count(), 1);
}

TEST(ClientArrow, EmptyPageHasNonNullBuffers) {
    auto page = decode("[]", "trim");
    ArrowArray a;
    vc::export_array(page, &a);
    EXPECT_EQ(a.length, 0);
    for (std::int64_t i = 0; i < a.n_children; ++i) {
        EXPECT_EQ(a.children[i]->length, 0);
        for (std::int64_t k = 1; k < a.children[i]->n_buffers; ++k) EXPECT_NE(a.children[i]->buffers[k], nullptr);
    }
    a.release(&a);
    EXPECT_EQ(page.use_count(), 1);
}

TEST(ClientArrow, StreamGivesEachPageThenEndsAndReportsErrors) {
    auto p1 = decode(kTrims, "trim_detail");
    auto p2 = decode(R"J([{"id":5}])J", "trim_detail");
    ArrowArrayStream st;
    vc::export_stream({p1, p2}, p1, &st);
    ArrowSchema s;
    ASSERT_EQ(st.get_schema(&st, &s), 0);
    EXPECT_EQ(s.n_children, static_cast<std::int64_t>(p1->columns.size()));
    s.release(&s);
    ArrowArray a;
    ASSERT_EQ(st.get_next(&st, &a), 0);
    EXPECT_EQ(a.length, 2);
    a.release(&a);
    ASSERT_EQ(st.get_next(&st, &a), 0);
    EXPECT_EQ(a.length, 1);
    a.release(&a);
    ASSERT_EQ(st.get_next(&st, &a), 0);
    EXPECT_EQ(a.release, nullptr);  // end of stream
    st.release(&st);
    EXPECT_EQ(st.release, nullptr);
    EXPECT_EQ(p1.use_count(), 1);
    EXPECT_EQ(p2.use_count(), 1);

    auto other = decode(R"J([{"id":5}])J", "make", sc::Shape::Array);
    vc::export_stream({other}, p1, &st);
    EXPECT_NE(st.get_next(&st, &a), 0);
    EXPECT_NE(std::string(st.get_last_error(&st)).find("other columns"), std::string::npos);
    st.release(&st);

    vc::export_stream(p1, [] () -> std::shared_ptr<const vc::Page> { throw std::runtime_error("fetch failed"); }, &st);
    EXPECT_NE(st.get_next(&st, &a), 0);
    EXPECT_STREQ(st.get_last_error(&st), "fetch failed");
    st.release(&st);
}

namespace {

// The key/value pairs of Arrow C Data Interface metadata (int32 count, then length-prefixed bytes).
std::vector<std::pair<std::string, std::string>> pairs_of(const char* meta) {
    std::vector<std::pair<std::string, std::string>> out;
    if (!meta) return out;
    auto int32 = [&](std::int32_t& v) { std::memcpy(&v, meta, 4); meta += 4; };
    std::int32_t n = 0;
    int32(n);
    for (std::int32_t i = 0; i < n; ++i) {
        std::int32_t k = 0, v = 0;
        int32(k);
        std::string key(meta, static_cast<std::size_t>(k));
        meta += k;
        int32(v);
        out.emplace_back(std::move(key), std::string(meta, static_cast<std::size_t>(v)));
        meta += v;
    }
    return out;
}

}  // namespace

TEST(ClientArrow, SyntheticFieldsLabelTheSchema) {
    auto plain = decode(kTrims, "trim_detail");
    ArrowSchema s;
    vc::export_schema(*plain, &s);  // no labels: no metadata anywhere
    EXPECT_EQ(s.metadata, nullptr);
    for (std::int64_t i = 0; i < s.n_children; ++i) EXPECT_EQ(s.children[i]->metadata, nullptr);
    s.release(&s);

    auto page = std::make_shared<vc::Page>(*plain);
    page->synthetic = {"msrp", "engines.valves", "engines.cam_type"};
    vc::export_schema(*page, &s);
    using P = std::vector<std::pair<std::string, std::string>>;
    EXPECT_EQ(pairs_of(s.metadata), (P{{"vehicledata.synthetic", "msrp,engines.valves,engines.cam_type"}}));
    EXPECT_EQ(pairs_of(s.children[child_index(s, "msrp")]->metadata), (P{{"vehicledata.origin", "synthetic"}}));
    EXPECT_EQ(pairs_of(s.children[child_index(s, "engines")]->metadata),
              (P{{"vehicledata.synthetic", "valves,cam_type"}}));
    EXPECT_EQ(s.children[child_index(s, "make")]->metadata, nullptr);
    s.release(&s);
    vc::export_text_schema(*page, &s);  // pandas' text-only export carries none
    EXPECT_EQ(s.metadata, nullptr);
    s.release(&s);
}
