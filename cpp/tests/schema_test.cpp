#include <gtest/gtest.h>

#include <set>

#include "vehicledata/schema.h"

namespace sc = vehicledata::schema;

TEST(Schema, EveryEndpointRecordExists) {
    for (const auto& e : sc::endpoints()) {
        if (e.record.empty()) continue;
        EXPECT_NE(sc::find_record(e.record), nullptr) << e.path;
    }
}

TEST(Schema, EveryStorageTableHasOnePrimaryRecord) {
    std::set<std::string> tables;
    for (const auto& r : sc::records())
        if (!r.table.empty()) tables.insert(r.table);
    for (const auto& t : tables) {
        int n = 0;
        for (const auto& r : sc::records()) n += (r.primary && r.table == t);
        EXPECT_EQ(n, 1) << t;
    }
}

TEST(Schema, ProjectionColumnsExistInTheirTable) {
    for (const auto& r : sc::records()) {
        if (r.table.empty() || r.primary) continue;
        const sc::Record* p = sc::table_record(r.table);
        ASSERT_NE(p, nullptr) << r.name;
        for (const auto& f : r.fields) {
            if (f.type == sc::Type::Nested) continue;
            EXPECT_NE(p->field(f.sql()), nullptr) << r.name << "." << f.name << " -> " << f.sql();
        }
    }
}

TEST(Schema, JsonFieldsResolveToColumnsOfTheirTable) {
    for (const auto& e : sc::endpoints()) {
        for (const auto& j : e.json_fields) {
            const std::string table = j.related_table.empty() ? e.table : j.related_table;
            const sc::Record* p = sc::table_record(table);
            ASSERT_NE(p, nullptr) << e.path << " " << j.name;
            EXPECT_NE(p->field(j.column), nullptr) << e.path << " json " << j.name << " -> " << j.column;
        }
    }
}

TEST(Schema, FiltersAndSortKeysResolve) {
    for (const auto& e : sc::endpoints()) {
        const sc::Record* p = e.table.empty() ? nullptr : sc::table_record(e.table);
        for (const auto& f : e.filters) {
            const std::string col = f.column.empty() ? f.name : f.column;
            if (!f.related_table.empty()) {
                const sc::Record* r = sc::table_record(f.related_table);
                ASSERT_NE(r, nullptr) << e.path << " filter " << f.name;
                EXPECT_NE(r->field(col), nullptr) << e.path << " filter " << f.name;
                EXPECT_NE(r->field(f.related_key), nullptr) << e.path << " filter " << f.name;
                continue;
            }
            if (!f.one_of.empty()) {  // a required choice (powersports `type`), not a column
                EXPECT_EQ(f.name, "type") << e.path;
                continue;
            }
            if (f.predicate || !p) continue;
            EXPECT_NE(p->field(col), nullptr) << e.path << " filter " << f.name;
        }
        for (const auto& s : e.sort_keys) {
            ASSERT_NE(p, nullptr) << e.path;
            EXPECT_NE(p->field(s.column), nullptr) << e.path << " sort " << s.name;
        }
    }
}

TEST(Schema, SpecEnumerationsAreComplete) {
    const sc::Record* engine = sc::find_record("engine");
    ASSERT_NE(engine, nullptr);
    EXPECT_EQ(engine->field("transmission")->enum_values.size(), 31u);
    EXPECT_EQ(engine->field("fuel_type")->enum_values.size(), 12u);
    EXPECT_EQ(engine->field("cylinders")->enum_values.size(), 15u);
    EXPECT_EQ(sc::find_record("body")->field("type")->enum_values.size(), 29u);
}

TEST(Schema, TrimsSearchJsonIncludesDottedRelatedFields) {
    const sc::Endpoint* e = sc::find_endpoint("/api/trims/v2");
    ASSERT_NE(e, nullptr);
    const sc::JsonField* j = e->json_field("engines.fuel_type");
    ASSERT_NE(j, nullptr);
    EXPECT_EQ(j->related_table, "engines");
    EXPECT_EQ(j->related_key, "trim_id");
    EXPECT_EQ(j->enum_values.size(), 12u);
    EXPECT_EQ(e->json_field("engines.valves")->type, sc::Type::Int);
}

TEST(Schema, V2RecordFieldOrderMatchesTheServedEngineRecord) {
    const sc::Record* engine = sc::find_record("engine");
    std::vector<std::string> names;
    for (const auto* f : engine->record_fields()) names.push_back(f->name);
    const std::vector<std::string> expected = {"id", "make_id", "model_id", "submodel_id", "trim_id", "year", "make",
        "model", "series", "submodel", "trim", "trim_description", "engine_type", "fuel_type", "cylinders", "size",
        "horsepower_hp", "horsepower_rpm", "torque_ft_lbs", "torque_rpm", "valves", "valve_timing", "cam_type",
        "drive_type", "transmission"};
    EXPECT_EQ(names, expected);
}

TEST(Schema, NestedFieldsSayWhereTheirRowsComeFrom) {
    for (const auto& r : sc::records()) {
        if (r.table.empty()) continue;
        const sc::Record* parent = sc::table_record(r.table);
        for (const auto& f : r.fields) {
            if (f.type != sc::Type::Nested) continue;
            const sc::Record* n = sc::find_record(f.nested);
            ASSERT_NE(n, nullptr) << r.name << "." << f.name;
            ASSERT_FALSE(f.nested_key.empty()) << r.name << "." << f.name;
            if (n->table.empty()) {  // "table.column" of distinct values
                const auto dot = f.nested_key.find('.');
                ASSERT_NE(dot, std::string::npos) << f.nested_key;
                const sc::Record* src = sc::table_record(f.nested_key.substr(0, dot));
                ASSERT_NE(src, nullptr) << f.nested_key;
                EXPECT_NE(src->field(f.nested_key.substr(dot + 1)), nullptr) << f.nested_key;
            } else if (f.nested_array || f.nested_by_parent_id) {  // column of the element table holding the parent id
                EXPECT_NE(sc::table_record(n->table)->field(f.nested_key), nullptr) << r.name << "." << f.name;
            } else {  // column of the parent holding the element id
                EXPECT_NE(parent->field(f.nested_key), nullptr) << r.name << "." << f.name;
            }
        }
    }
}

TEST(Schema, RelatedPredicateKeepsDemoCallersInsideTheRelatedDemoRows) {
    EXPECT_EQ(sc::related_predicate("trims", "model_id", "year = ?", false),
              "id IN (SELECT model_id FROM trims WHERE year = ?)");
    EXPECT_EQ(sc::related_predicate("trims", "model_id", "year = ?", true),
              "id IN (SELECT model_id FROM trims WHERE (year = ?) AND year BETWEEN 2015 AND 2020)");
    EXPECT_EQ(sc::table_demo_predicate("engines"), "year BETWEEN 2015 AND 2020");
    EXPECT_EQ(sc::table_demo_predicate("obd_codes"), "demo = 1");
    EXPECT_EQ(sc::table_demo_predicate("makes"), "");
}

TEST(Schema, YearFiltersOfMakesAndModelsGoThroughTrims) {
    for (const char* path : {"/api/makes/v2", "/api/makes", "/api/models/v2", "/api/models"}) {
        const sc::Endpoint* e = sc::find_endpoint(path);
        ASSERT_NE(e, nullptr) << path;
        const sc::Filter* f = e->filter("year");
        ASSERT_NE(f, nullptr) << path;
        EXPECT_EQ(f->related_table, "trims") << path;
        EXPECT_EQ(f->related_key, e->table == "makes" ? "make_id" : "model_id") << path;
        EXPECT_EQ(f->column, "year") << path;
    }
}

TEST(Schema, DeprecatedEndpointsAreTheOnesAV2EndpointReplaces) {
    int pairs = 0;
    for (const auto& e : sc::endpoints()) {
        if (!e.deprecates.empty()) {
            const sc::Endpoint* old = sc::find_endpoint(e.deprecates);
            ASSERT_NE(old, nullptr) << e.path;
            EXPECT_TRUE(old->deprecated) << old->path;
            EXPECT_EQ(old->replaced_by, e.path);
            EXPECT_EQ(old->kind, e.kind) << e.path;
            EXPECT_EQ(old->resource, e.resource) << e.path;
            EXPECT_EQ(sc::find_endpoint(e.kind, e.resource, true), old) << e.path;
            ++pairs;
        }
        EXPECT_EQ(e.deprecated, !e.replaced_by.empty()) << e.path;
        if (!e.deprecated) EXPECT_EQ(sc::find_endpoint(e.kind, e.resource), &e) << e.path;
    }
    EXPECT_EQ(pairs, 10);
}

TEST(Schema, KindsParametersAndTheLegacyTrimQuirk) {
    EXPECT_EQ(sc::find_endpoint(sc::Kind::Login)->method, "POST");
    EXPECT_TRUE(sc::find_endpoint(sc::Kind::Login)->text_errors);
    EXPECT_TRUE(sc::find_endpoint(sc::Kind::FeedDownload)->text_errors);
    EXPECT_EQ(sc::find_endpoint(sc::Kind::Search, "nope"), nullptr);
    EXPECT_EQ(sc::path_parameter(*sc::find_endpoint(sc::Kind::Detail, "obd_codes")), "code");
    EXPECT_EQ(sc::path_parameter(*sc::find_endpoint(sc::Kind::Vin)), "vin");
    EXPECT_EQ(sc::path_parameter(*sc::find_endpoint(sc::Kind::Search, "trims")), "");
    EXPECT_EQ(sc::kind_name(sc::Kind::AccountToday), "account_today");
    std::set<std::string> quirky;
    for (const auto& e : sc::endpoints())
        if (e.quirk == sc::Quirk::LegacyTrimVerbose) quirky.insert(e.record);
    EXPECT_EQ(quirky, std::set<std::string>{"trim_legacy"});
    EXPECT_EQ(sc::record_quirk(*sc::find_record("trim_legacy")), sc::Quirk::LegacyTrimVerbose);
    EXPECT_EQ(sc::record_quirk(*sc::find_record("trim_detail")), sc::Quirk::None);
    const sc::Record* legacy = sc::find_record("trim_legacy");
    for (const auto& a : sc::legacy_trim_aliases()) {
        ASSERT_NE(legacy->field(a.member), nullptr) << a.member;
        EXPECT_EQ(legacy->field(a.member)->type, sc::Type::Nested);
        EXPECT_EQ(legacy->field(a.old_key), nullptr) << a.old_key;
    }
}
