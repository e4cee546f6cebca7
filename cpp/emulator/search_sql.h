// The search SQL (as moto's models; routes.cpp is the urls, api.cpp the responses): a search's
// WHERE clause, ORDER BY and sorted result ids, built from the schema's endpoint and the call.
//
// Thread safety: the functions keep no state of their own (result_ids caches in the Store).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "call.h"
#include "store.h"
#include "vehicledata/query.h"
#include "vehicledata/schema.h"

namespace vehicledata::emulator {

// A WHERE clause (" WHERE (a) AND (b)", or "") and its bound values.
struct Sql {
    std::string where;
    std::vector<query::Scalar> params;
    void add(std::string_view clause) {
        where.append(where.empty() ? " WHERE (" : " AND (");
        where.append(clause);
        where.push_back(')');
    }
};

// Filters, json conditions and the demo restriction of a search on `e`; 400 on bad values.
Sql build_where(const Call& call, const schema::Endpoint& e);
// " ORDER BY ..." of `sort` and `direction`, the endpoint's default order as the tie-breaker.
std::string order_by(const Call& call, const schema::Endpoint& e);
// The sorted rowids of "SELECT rowid" + from_where_order (cached until the data change).
std::shared_ptr<const Store::Ids> result_ids(Store& store, const std::string& from_where_order,
                                             const std::vector<query::Scalar>& params);

}  // namespace vehicledata::emulator
