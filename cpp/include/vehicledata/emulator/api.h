// The service's operations over the store: route matching and handlers.
//
// Thread safety: an Api is shared by all worker threads; handle() may run
// concurrently (the store hands each thread its own connection).
#pragma once

#include <httplib.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "vehicledata/emulator/records.h"
#include "vehicledata/emulator/state.h"
#include "vehicledata/emulator/store.h"
#include "vehicledata/format.h"
#include "vehicledata/schema.h"
#include "vehicledata/emulator/vin_tables.h"

namespace vehicledata::emulator {

// An error answer: JSON {exception, code, url, message} or, on routes with
// text errors (login, data feed download), the message as text/plain.
class HttpError : public std::runtime_error {
public:
    HttpError(int status, std::string exception, const std::string& message)
        : std::runtime_error(message), status(status), exception(std::move(exception)) {}
    int status;
    std::string exception;
};

enum class RouteKind {
    Login, AccountRequests, AccountToday, FeedDownload, FeedLastUpdated,
    Search, Years, TrimDetail, TrimLegacyDetail, ObdDetail, Attributes, Vin, LicensePlate,
};

struct Route {
    RouteKind kind = RouteKind::Search;
    const schema::Endpoint* endpoint = nullptr;
    std::string arg;            // path parameter ({id}, {code}, {vin}), decoded
    const char* method = "GET";
    bool text_errors = false;   // login and data feed download answer errors as text/plain
    bool rate_limited = true;
};

// The route of a decoded request path, or nullopt for an unknown path.
std::optional<Route> match_route(std::string_view path);

struct Call {
    const Route* route = nullptr;
    std::string_view target;   // request target as sent (path and query)
    std::string_view path;     // decoded path
    std::vector<format::QueryParam> params;  // in order; a repeated name keeps its first place and last value
    Identity identity;
    std::string_view body;
    std::string_view remote_addr;
    std::string_view range;    // the Range header; set only for the data feed download
};

// Dedupes query parameters as PHP does (first position, last value).
std::vector<format::QueryParam> dedupe_params(std::vector<format::QueryParam> params);

// The ZIP of the data feed, built on first use into a temporary file, and again
// after the data change (Store::data_generation).
class Feed {
public:
    explicit Feed(Store& store) : store_(store) {}
    ~Feed();
    struct File {
        std::string path;
        std::size_t size = 0;
        int fd = -1;
        std::uint64_t generation = 0;
        ~File();  // closes fd and removes the file (when the last download of it ends)
    };
    // Builds (once) and returns the archive; throws StoreError on failure.
    std::shared_ptr<const File> get();
    // The archive's size if it has been built, else 0 (never builds it).
    std::size_t built_size();

private:
    Store& store_;
    std::mutex mutex_;
    std::shared_ptr<File> file_;
};

// Writes every resource of the feed as CSV into a ZIP at `zip_path`.
void write_feed_zip(Store& store, const std::string& zip_path);

// Sets a 200 response with a JSON body.
void set_json(httplib::Response& res, std::string&& body);

class Api {
public:
    Api(Store& store, Auth& auth, UsageCounters& usage, const Clock& clock);
    // Answers a routed call; throws HttpError for error answers.
    void handle(const Call& call, httplib::Response& res);
    // Appends the legacy trim object of `trim_id` (as /api/trims/{id}: MakeModelTrim with make_model,
    // make_model_trim_body/engine/mileage and the colour arrays; with `verbose`, also make_id, make,
    // model) to `out`. With `demo`, only trims of the demo data-set. False (nothing appended) when
    // there is no such trim. Used by /api/trims/{id} and the VIN answer's `trims`.
    bool write_legacy_trim(std::string& out, std::int64_t trim_id, bool demo, bool verbose);
    // The data feed archive's size if already built, else 0.
    std::size_t feed_size() { return feed_.built_size(); }

private:
    void dispatch(const Call& call, httplib::Response& res);
    void search(const Call& call, httplib::Response& res);
    void years(const Call& call, httplib::Response& res);
    void attributes(const Call& call, httplib::Response& res);
    void trim_detail(const Call& call, httplib::Response& res, bool legacy);
    void obd_detail(const Call& call, httplib::Response& res);
    void license_plate(const Call& call, httplib::Response& res);
    void vin(const Call& call, httplib::Response& res);
    void login(const Call& call, httplib::Response& res);
    void account(const Call& call, httplib::Response& res, bool today);
    void feed_last_updated(const Call& call, httplib::Response& res);
    void feed_download(const Call& call, httplib::Response& res);

    // Writes the nested value of `item` for the row whose plan columns are in `stmt`.
    void write_nested(std::string& out, const PlanItem& item, sqlite3_stmt* stmt, const Plan& plan, bool demo);
    const Plan& plan_of(const schema::Record& record, bool verbose);
    // X-Emulator-Synthetic values per record name: the record's fields (nested ones as
    // "key.field") whose provenance origin is 'synthetic'; read once in the constructor.
    void load_synthetic_fields();
    void set_synthetic_header(const Call& call, httplib::Response& res) const;

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
    std::map<std::string, std::string> synthetic_;  // record name -> header value (absent: none)
};

}  // namespace vehicledata::emulator
