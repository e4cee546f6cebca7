// The demo restriction inside related-table predicates (json dotted/related fields).
#include <gtest/gtest.h>

#include "vehicledata/query.h"
#include "vehicledata/schema.h"

namespace q = vehicledata::query;
namespace sc = vehicledata::schema;

TEST(EmulatorDemo, RelatedJsonFieldsSeeOnlyDemoRowsForDemoCallers) {
    const sc::Endpoint* models = sc::find_endpoint("/api/models/v2");
    ASSERT_NE(models, nullptr);
    const auto conditions = q::parse(R"([{"field":"year","op":"<","val":2015}])");
    EXPECT_EQ(q::to_sql(conditions, *models, true).sql,
              "id IN (SELECT model_id FROM trims WHERE (year < ?) AND year BETWEEN 2015 AND 2020)");
    EXPECT_EQ(q::to_sql(conditions, *models, false).sql, "id IN (SELECT model_id FROM trims WHERE year < ?)");

    const sc::Endpoint* trims = sc::find_endpoint("/api/trims/v2");
    ASSERT_NE(trims, nullptr);
    EXPECT_EQ(q::to_sql(q::parse(R"([{"field":"engines.fuel_type","op":"=","val":"electric"}])"), *trims, true).sql,
              "id IN (SELECT trim_id FROM engines WHERE (fuel_type COLLATE NOCASE = ?) AND year BETWEEN 2015 AND 2020)");
}
