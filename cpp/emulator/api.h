// The service's operations over the store (as moto's responses): the Api that owns the
// service's state and dispatches a routed call to its handler by the endpoint's kind, and the
// search handlers (search, years, attributes). The other handlers live beside their data:
// detail.h, vin.h, account.h, feed.h; the search SQL in search_sql.h; the routes in routes.h.
//
// Thread safety: an Api is shared by all worker threads; handle() may run
// concurrently (the store hands each thread its own connection).
#pragma once

#include <httplib.h>

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "auth.h"
#include "call.h"
#include "feed.h"
#include "records.h"
#include "store.h"
#include "usage.h"
#include "vehicledata/schema.h"
#include "vin.h"
#include "vin_load.h"

namespace vehicledata::emulator {

// Sets a 200 response with a JSON body.
void set_json(httplib::Response& res, std::string&& body);

class Api {
public:
    Api(Store& store, Auth& auth, UsageCounters& usage, const Clock& clock);
    // Answers a routed call; throws HttpError for error answers.
    void handle(const Call& call, httplib::Response& res);
    // The data feed archive's size if already built, else 0.
    std::size_t feed_size() { return feed_.built_size(); }
    const Plan& plan_of(const schema::Record& record, bool verbose);

    // The service's state, read by the handlers of detail.cpp, vin.cpp, account.cpp and feed.cpp.
    Store& store_;
    Auth& auth_;
    UsageCounters& usage_;
    const Clock& clock_;
    Feed feed_;
    // Plans of every record, plain and verbose; built in the constructor, read-only after.
    std::map<std::pair<const schema::Record*, bool>, std::unique_ptr<Plan>> plans_;
    RowCache rows_;
    // The VIN decoder over the vPIC tables, loading from the constructor on its own thread.
    std::unique_ptr<VinDecoderSlot> vin_decoder_;
    VinTrimCache vin_trims_;  // the catalogue trims of the VIN answers' year/make/model
    std::map<std::string, std::string> synthetic_;  // record name -> X-Emulator-Synthetic value (absent: none)

private:
    void dispatch(const Call& call, httplib::Response& res);
    void search(const Call& call, httplib::Response& res);
    void years(const Call& call, httplib::Response& res);
    void attributes(const Call& call, httplib::Response& res);
};

}  // namespace vehicledata::emulator
