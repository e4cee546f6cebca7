// The schema table.  See schema.h for what reads it.
//
// Order of fields is the order of the JSON record.  Storage tables are defined
// by the `primary` record of each table (record fields plus in_record=false
// columns); other records of the same table are projections with SQL aliases.
#include "vehicledata/schema.h"

#include <algorithm>

namespace vehicledata::schema {

namespace {

using Strings = std::vector<std::string>;

// ---- field constructors (short names keep the table readable) -------------
Field I(std::string n, bool nullable = false) { Field f; f.name = std::move(n); f.type = Type::Int; f.nullable = nullable; return f; }
Field I64(std::string n, bool nullable = false) { Field f = I(std::move(n), nullable); f.type = Type::Int64; return f; }
Field S(std::string n, bool nullable = false, int max = 0) { Field f; f.name = std::move(n); f.type = Type::String; f.nullable = nullable; f.max_length = max; return f; }
Field E(std::string n, int max, Strings values) { Field f = S(std::move(n), true, max); f.enum_values = std::move(values); return f; }
Field D(std::string n, int scale = 1) { Field f; f.name = std::move(n); f.type = Type::Decimal; f.nullable = true; f.scale = scale; return f; }
Field TS(std::string n) { Field f; f.name = std::move(n); f.type = Type::Timestamp; return f; }
Field Hidden(Field f) { f.in_record = false; return f; }
Field VerboseOnly(Field f) { f.in_record = false; f.verbose_only = true; return f; }
Field As(Field f, std::string column) { f.column = std::move(column); return f; }
// The legacy trim's members of one per-trim table: an object (the first row) or an array.
Field NestByTrim(std::string n, std::string record, bool array) {
    Field f;
    f.name = std::move(n);
    f.type = Type::Nested;
    f.nested = std::move(record);
    f.nested_array = array;
    f.nested_key = "trim_id";
    f.nested_by_parent_id = !array;
    return f;
}
Field Nest(std::string n, std::string record, bool array, std::string key = {}) {
    Field f;
    f.name = std::move(n);
    f.type = Type::Nested;
    f.nested = std::move(record);
    f.nested_array = array;
    f.nested_key = std::move(key);
    return f;
}

// ---- enumerations (docs/resources.md) ----------------------------------------
const Strings kBodyTypes = {"Cargo Van", "Convertible", "Coupe", "Ext Cargo Minivan", "Ext Cargo Van",
    "Ext Minivan", "Ext Van", "Hatchback", "Minivan", "Passenger Van", "Sedan", "SUV",
    "Truck (Access Cab)", "Truck (Cab Plus)", "Truck (Club Cab)", "Truck (Crew Cab)", "Truck (CrewMax)",
    "Truck (Double Cab)", "Truck (Extended Cab)", "Truck (King Cab)", "Truck (Mega Cab)",
    "Truck (Quad Cab)", "Truck (Regular Cab)", "Truck (SuperCab)", "Truck (SuperCrew)",
    "Truck (Xtracab)", "Unknown", "Van", "Wagon"};
const Strings kEngineTypes = {"diesel", "electric", "electric (fuel cell)", "flex-fuel (FFV)", "gas",
    "hybrid", "mild hybrid", "natural gas (CNG)", "plug-in hybrid"};
const Strings kFuelTypes = {"diesel fuel", "electric", "flex-fuel (premium unleaded recommended/E85)",
    "flex-fuel (premium unleaded required/E85)", "flex-fuel (unleaded/E85)",
    "flex-fuel (unleaded/natural gas)", "hydrogen", "midgrade unleaded (recommended)", "natural gas",
    "premium unleaded (recommended)", "premium unleaded (required)", "regular unleaded"};
const Strings kCylinders = {"flat 4", "flat 6", "I2", "I3", "I4", "I5", "I6", "rotary 0", "V10", "V12",
    "V6", "V8", "W12", "W16", "W8"};
const Strings kValveTiming = {"Variable"};
const Strings kCamTypes = {"Double overhead cam (DOHC)", "Overhead valves (OHV)", "Single overhead cam (SOHC)"};
const Strings kDriveTypes = {"all wheel drive", "four wheel drive", "front wheel drive", "rear wheel drive"};
const Strings kTransmissions = {"1-speed automatic", "1-speed direct drive", "10-speed automatic",
    "10-speed shiftable automatic", "2-speed", "2-speed automatic", "3-speed automatic",
    "4-speed automatic", "4-speed manual", "4-speed shiftable automatic", "5-speed automated manual",
    "5-speed automatic", "5-speed manual", "5-speed shiftable automatic", "6-speed automated manual",
    "6-speed automatic", "6-speed manual", "6-speed shiftable automatic", "7-speed automated manual",
    "7-speed automatic", "7-speed manual", "7-speed shiftable automatic", "8-speed automated manual",
    "8-speed automatic", "8-speed shiftable automatic", "9-speed automated manual", "9-speed automatic",
    "9-speed shiftable automatic", "continuously variable-speed automatic",
    "continuously variable-speed shiftable automatic", "electrically variable-speed automatic"};

// ---- shared field groups -----------------------------------------------------
// Identity of every v2 per-trim record (bodies, engines, mileages, colours).
std::vector<Field> identity_v2() {
    return {I64("id"), I("make_id"), I("model_id"), I("submodel_id"), I("trim_id"), I("year"),
            S("make"), S("model"), S("series", true), S("submodel"), S("trim"), S("trim_description")};
}
std::vector<Field> body_measures() {
    return {E("type", 32, kBodyTypes), I("doors", true), D("length"), D("width"), I("seats", true), D("height"),
            D("wheel_base"), D("front_track"), D("rear_track"), D("ground_clearance"), D("cargo_capacity"),
            D("max_cargo_capacity"), I64("curb_weight", true), I64("gross_weight", true),
            I64("max_payload", true), I64("max_towing_capacity", true)};
}
std::vector<Field> engine_measures() {
    return {E("engine_type", 32, kEngineTypes), E("fuel_type", 64, kFuelTypes), E("cylinders", 16, kCylinders),
            D("size"), I64("horsepower_hp", true), I64("horsepower_rpm", true), I64("torque_ft_lbs", true),
            I64("torque_rpm", true), I("valves", true), E("valve_timing", 32, kValveTiming),
            E("cam_type", 64, kCamTypes)};
}
std::vector<Field> engine_drivetrain() {
    return {E("drive_type", 32, kDriveTypes), E("transmission", 64, kTransmissions)};
}
std::vector<Field> mileage_measures() {
    return {D("fuel_tank_capacity"), I("combined_mpg", true), I("epa_city_mpg", true), I("epa_highway_mpg", true),
            I("range_city", true), I("range_highway", true), I("battery_capacity_electric", true),
            D("epa_time_to_charge_hr_240v_electric"), I("epa_kwh_100_mi_electric", true),
            I("range_electric", true), I("epa_highway_mpg_electric", true), I("epa_city_mpg_electric", true),
            I("epa_combined_mpg_electric", true)};
}
std::vector<Field> created_modified(bool in_record) {
    Field c = TS("created"), m = TS("modified");
    c.in_record = m.in_record = in_record;
    return {c, m};
}
template <class... Groups>
std::vector<Field> cat(Groups... groups) {
    std::vector<Field> out;
    (out.insert(out.end(), groups.begin(), groups.end()), ...);
    return out;
}
// Legacy projections: make_model_trim_id is the trim id, make_model_id the model id.
std::vector<Field> legacy_ids() { return {I64("id"), As(I64("make_model_trim_id"), "trim_id")}; }
std::vector<Field> legacy_verbose() {
    return {VerboseOnly(As(I("make_model_id"), "model_id")), VerboseOnly(I("make_id")), VerboseOnly(I("year")),
            VerboseOnly(S("make")), VerboseOnly(S("model")), VerboseOnly(S("trim"))};
}
std::vector<Field> colour_fields_v2() { return {S("color", false, 64), S("rgb", false, 16)}; }
std::vector<Field> colour_fields_legacy() { return {As(S("name", false, 64), "color"), S("rgb", false, 16)}; }

Record R(std::string name, std::string table, bool primary, std::vector<Field> fields) {
    Record r;
    r.name = std::move(name);
    r.table = std::move(table);
    r.primary = primary;
    r.fields = std::move(fields);
    return r;
}

std::vector<Record> build_records() {
    std::vector<Record> rs;
    rs.push_back(R("make", "makes", true, {I("id"), S("name", false, 64)}));
    rs.push_back(R("model", "models", true,
                   cat(std::vector<Field>{I64("id"), I64("make_id"), S("name", false, 128), S("make", false, 64)},
                       created_modified(false))));
    rs.push_back(R("submodel", "submodels", true,
                   cat(std::vector<Field>{I64("id"), I64("oem_make_model_id"), I64("year"), S("make"), S("model"),
                                          S("submodel"), Hidden(I64("make_id"))},
                       created_modified(false))));
    rs.push_back(R("trim", "trims", true,
                   cat(std::vector<Field>{I("id"), I("make_id"), I("model_id"), I("submodel_id"), I("year"),
                                          S("make"), S("model"), S("series", true), S("submodel"), S("trim"),
                                          S("description"), I64("msrp", true), I64("invoice", true)},
                       created_modified(true))));
    // Trim detail: the trim record plus the associated arrays.
    {
        Record d = R("trim_detail", "trims", false, rs.back().fields);
        for (auto& f : cat(std::vector<Field>{Nest("bodies", "body_legacy", true, "trim_id"),
                                             Nest("engines", "engine_legacy", true, "trim_id"),
                                             Nest("transmissions", "description_item", true, "engines.transmission"),
                                             Nest("drive_types", "description_item", true, "engines.drive_type"),
                                             Nest("mileages", "mileage_legacy", true, "trim_id"),
                                             Nest("exterior_colors", "exterior_color_legacy", true, "trim_id"),
                                             Nest("interior_colors", "interior_color_legacy", true, "trim_id")}))
            d.fields.push_back(f);
        rs.push_back(d);
    }
    rs.push_back(R("description_item", "", false, {S("description")}));
    // Legacy trim: make_model nested object.
    rs.push_back(R("trim_legacy", "trims", false,
                   cat(std::vector<Field>{I64("id"), As(I64("make_model_id"), "model_id"), I("year"),
                                          As(S("name"), "trim"), S("description"), I64("msrp", true),
                                          I64("invoice", true)},
                       created_modified(true),
                       // As the public OpenAPI document (MakeModelTrim): always, without verbose.
                       std::vector<Field>{Nest("make_model", "make_model_legacy", false, "model_id"),
                                          NestByTrim("make_model_trim_body", "body_legacy", false),
                                          NestByTrim("make_model_trim_engine", "trim_engine_legacy", false),
                                          NestByTrim("make_model_trim_mileage", "mileage_legacy", false),
                                          NestByTrim("make_model_trim_exterior_colors", "exterior_color_legacy", true),
                                          NestByTrim("make_model_trim_interior_colors", "interior_color_legacy", true),
                                          VerboseOnly(I("make_id")), VerboseOnly(S("make")), VerboseOnly(S("model"))})));
    rs.push_back(R("make_model_legacy", "models", false,
                   {I64("id"), I64("make_id"), S("name"), Nest("make", "make", false, "make_id")}));

    rs.push_back(R("body", "bodies", true, cat(identity_v2(), body_measures(), created_modified(false))));
    rs.push_back(R("body_legacy", "bodies", false, cat(legacy_ids(), body_measures(), legacy_verbose(), created_modified(false))));
    rs.push_back(R("engine", "engines", true,
                   cat(identity_v2(), engine_measures(), engine_drivetrain(), created_modified(false))));
    {
        // Legacy engine (nested in the trim detail): docs/resources.md lists created and modified.
        rs.push_back(R("engine_legacy", "engines", false,
                       cat(legacy_ids(), engine_measures(), engine_drivetrain(), legacy_verbose(), created_modified(true))));
    }
    // The legacy trim's make_model_trim_engine (OpenAPI MakeModelTrimEngine: no created/modified).
    rs.push_back(R("trim_engine_legacy", "engines", false, cat(legacy_ids(), engine_measures(), engine_drivetrain())));
    rs.push_back(R("mileage", "mileages", true, cat(identity_v2(), mileage_measures(), created_modified(false))));
    rs.push_back(R("mileage_legacy", "mileages", false, cat(legacy_ids(), mileage_measures(), legacy_verbose(), created_modified(false))));
    rs.push_back(R("exterior_color", "exterior_colors", true, cat(identity_v2(), colour_fields_v2(), created_modified(false))));
    rs.push_back(R("exterior_color_legacy", "exterior_colors", false, cat(legacy_ids(), colour_fields_legacy(), legacy_verbose(), created_modified(false))));
    rs.push_back(R("interior_color", "interior_colors", true, cat(identity_v2(), colour_fields_v2(), created_modified(false))));
    rs.push_back(R("interior_color_legacy", "interior_colors", false, cat(legacy_ids(), colour_fields_legacy(), legacy_verbose(), created_modified(false))));

    rs.push_back(R("obd_code", "obd_codes", true,
                   {S("code", false, 16), S("description"), Hidden(S("make", true, 64)), Hidden(I("demo"))}));
    // Powersports (street motorcycles, from vPIC's motorcycle makes and models): makes, models
    // (OemMakeModel's fields) and the model years each model is sold in (no endpoint of its own).
    // No maximum lengths: the public document states none, and vPIC's names run to 72 and 136.
    rs.push_back(R("powersports_make", "powersports_makes", true, {I("id"), S("name")}));
    rs.push_back(R("powersports_model", "powersports_models", true,
                   {I64("id"), I64("make_id"), S("name"), S("make")}));
    rs.push_back(R("powersports_model_year", "powersports_model_years", true,
                   {I64("id"), I("year"), I64("make_id"), S("make"), I64("model_id"), S("model")}));

    // Synthetic records (no storage table of their own).
    rs.push_back(R("year", "", false, {I("year")}));
    rs.push_back(R("vehicle_attribute", "", false, {S("value")}));
    rs.push_back(R("usage_day", "", false, {[] { Field f; f.name = "date"; f.type = Type::Date; return f; }(), I64("count")}));
    rs.push_back(R("usage_today", "", false, {I64("count")}));
    rs.push_back(R("feed_timestamp", "", false, {S("last_updated")}));
    rs.push_back(R("license_plate", "", false,
                   {I("year", true), S("make", true), S("model", true), S("body", true), S("vin", true),
                    S("engine_description", true), S("assembled_in", true)}));
    rs.push_back(R("vin_result", "", false,
                   {I("year"), S("make"), S("model"), S("trim", true), Nest("specs", "vin_specs", false),
                    Nest("trims", "trim_legacy", true, "model_id")}));
    rs.push_back(R("vin_specs", "", false, {}));  // ~140 vPIC keys, string or null; open-ended
    // The wire envelope (cpp/core/envelope.cpp): a collection's paging block and the error body.
    rs.push_back(R("collection", "", false,
                   {S("url"), I64("count"), I64("pages"), I64("total"), S("next"), S("prev"), S("first"), S("last")}));
    rs.push_back(R("error", "", false, {S("exception"), I("code"), S("url"), S("message")}));
    return rs;
}

// ---- endpoints -----------------------------------------------------------------
Filter V(std::string n, std::string column = {}) { return Filter{std::move(n), Match::Value, std::move(column), false}; }
Filter L(std::string n, std::string column = {}) { return Filter{std::move(n), Match::Like, std::move(column), false}; }
// A Value filter on a column of a related table (see Filter::related_table).
Filter Rel(std::string n, std::string related_table, std::string related_key) {
    Filter f{n, Match::Value, n, false};
    f.related_table = std::move(related_table);
    f.related_key = std::move(related_key);
    return f;
}

// The demo data-set of the tables with a model year (a function: endpoints() may
// be built during another file's static initialisation).
std::string years_demo() {
    return "year BETWEEN " + std::to_string(kDemoFirstYear) + " AND " + std::to_string(kDemoLastYear);
}

// json fields are resolved against the record's fields (type, column) after the
// endpoint table is built; a spec "name=column" overrides the column.
struct JsonSpec { std::string name; std::string column; };

// One endpoint: what it does, for which resource, at which path.  A v2 endpoint names the
// deprecated one it replaces (Endpoint::deprecates); build_endpoints() marks that one.
Endpoint EP(Kind kind, std::string resource, std::string path, std::string category, std::string record) {
    Endpoint e;
    e.kind = kind;
    e.resource = std::move(resource);
    e.path = std::move(path);
    e.category = std::move(category);
    e.record = std::move(record);
    return e;
}

// Identity filters shared by bodies/engines/mileages/colours v2.
std::vector<Filter> identity_filters_v2() {
    return {V("year"), V("make"), V("model"), V("series"), V("submodel"), V("make_id"), V("model_id"),
            V("submodel_id"), V("trim_id")};
}
std::vector<std::string> identity_json_v2() {
    return {"year", "make", "model", "series", "submodel", "trim", "description=trim_description", "make_id",
            "model_id", "submodel_id", "trim_id"};
}
std::vector<std::string> legacy_json_ids() { return {"make_id", "make_model_id=model_id", "make_model_trim_id=trim_id"}; }

void add_json(Endpoint& e, const std::vector<std::string>& specs) {
    for (const auto& s : specs) {
        JsonField j;
        auto eq = s.find('=');
        j.name = s.substr(0, eq);
        if (eq != std::string::npos) j.column = s.substr(eq + 1);
        e.json_fields.push_back(j);
    }
}
void add_sort(Endpoint& e, const std::vector<std::string>& specs) {
    for (const auto& s : specs) {
        auto eq = s.find('=');
        e.sort_keys.push_back(SortKey{s.substr(0, eq), eq == std::string::npos ? s : s.substr(eq + 1)});
    }
}
// dotted trims fields: bodies.type, engines.*
void add_related_trim_json(Endpoint& e, const char* key) {
    for (const char* col : {"type"}) {
        JsonField j; j.name = std::string("bodies.") + col; j.column = col; j.related_table = "bodies"; j.related_key = key;
        e.json_fields.push_back(j);
    }
    for (const char* col : {"cam_type", "cylinders", "drive_type", "engine_type", "fuel_type", "transmission",
                            "valve_timing", "valves"}) {
        JsonField j; j.name = std::string("engines.") + col; j.column = col; j.related_table = "engines"; j.related_key = key;
        e.json_fields.push_back(j);
    }
}

std::vector<Endpoint> build_endpoints() {
    std::vector<Endpoint> es;
    const std::string id_sort = "id";

    // Years
    for (const char* path : {"/api/years/v2", "/api/years"}) {
        Endpoint e = EP(Kind::Years, "years", path, "Years", "year");
        e.shape = Shape::Array;
        e.paged = false;
        if (std::string(path) == "/api/years/v2") e.deprecates = "/api/years";
        e.filters = {V("year"), V("make"), V("model"), V("submodel"), V("oem_make_model_id", "model_id"),
                     V("make_id"), V("trim"), V("make_model_id", "model_id"), L("description")};
        add_json(e, {"year", "make", "model", "submodel", "trim", "description", "make_id", "make_model_id=model_id",
                     "created", "modified"});
        e.table = "trims";
        e.default_sort = "year DESC";
        e.demo_predicate = years_demo();
        es.push_back(e);
    }
    // Makes
    for (const char* path : {"/api/makes/v2", "/api/makes"}) {
        Endpoint e = EP(Kind::Search, "makes", path, "Makes", "make");
        if (std::string(path) == "/api/makes/v2") e.deprecates = "/api/makes";
        e.filters = {L("make", "name"), Rel("year", "trims", "make_id")};
        add_sort(e, {"Makes.name=name", "name", "id"});
        e.default_sort = "name ASC, id ASC";
        e.demo_predicate = "id IN (SELECT make_id FROM trims WHERE " + years_demo() + ")";
        es.push_back(e);
    }
    // Models
    for (const char* path : {"/api/models/v2", "/api/models"}) {
        Endpoint e = EP(Kind::Search, "models", path, "Models", "model");
        if (std::string(path) == "/api/models/v2") e.deprecates = "/api/models";
        e.filters = {Rel("year", "trims", "model_id"), L("make"),
                     L("model", "name"), V("make_id")};
        add_json(e, {"make", "model=name", "make_id", "created", "modified"});
        {
            JsonField j; j.name = "year"; j.type = Type::Int; j.column = "year"; j.related_table = "trims"; j.related_key = "model_id";
            e.json_fields.insert(e.json_fields.begin(), j);
        }
        add_sort(e, {"OemMakeModels.name=name", "Makes.name=make", "id", "name"});
        e.default_sort = "make ASC, name ASC, id ASC";
        e.demo_predicate = "id IN (SELECT model_id FROM trims WHERE " + years_demo() + ")";
        es.push_back(e);
    }
    // Powersports: `type` is required (the one catalogue the service names: street_motorcycle).
    {
        const Strings types = {"street_motorcycle"};
        auto type_filter = [&] { Filter f = V("type"); f.one_of = types; return f; };
        Endpoint y = EP(Kind::Years, "powersports_years", "/api/years/powersports", "Years", "year");
        y.shape = Shape::Array;
        y.paged = false;
        y.table = "powersports_model_years";
        y.filters = {type_filter(), V("year"), V("make"), V("model"), V("oem_make_model_id", "model_id"),
                     V("make_id")};
        add_json(y, {"year", "make", "model", "make_id", "make_model_id=model_id"});
        y.default_sort = "year DESC";
        y.demo_predicate = years_demo();
        es.push_back(y);

        Endpoint mk = EP(Kind::Search, "powersports_makes", "/api/makes/powersports", "Makes", "powersports_make");
        mk.filters = {type_filter(), L("make", "name"), Rel("year", "powersports_model_years", "make_id")};
        add_sort(mk, {"Makes.name=name"});
        mk.default_sort = "name ASC, id ASC";
        mk.demo_predicate = "id IN (SELECT make_id FROM powersports_model_years WHERE " + years_demo() + ")";
        es.push_back(mk);

        Endpoint md = EP(Kind::Search, "powersports_models", "/api/models/powersports", "Models", "powersports_model");
        md.filters = {type_filter(), Rel("year", "powersports_model_years", "model_id"), L("make"),
                      L("model", "name"), V("make_id")};
        add_json(md, {"make", "model=name", "make_id"});
        {
            JsonField j; j.name = "year"; j.type = Type::Int; j.column = "year";
            j.related_table = "powersports_model_years"; j.related_key = "model_id";
            md.json_fields.insert(md.json_fields.begin(), j);
        }
        add_sort(md, {"OemMakeModels.name=name", "Makes.name=make"});
        md.default_sort = "make ASC, name ASC, id ASC";
        md.demo_predicate = "id IN (SELECT model_id FROM powersports_model_years WHERE " + years_demo() + ")";
        es.push_back(md);
    }
    // Submodels
    {
        Endpoint e = EP(Kind::Search, "submodels", "/api/submodels/v2", "Sub Models", "submodel");
        e.filters = {V("year"), V("make"), V("model"), V("submodel"), V("oem_make_model_id"), V("make_id")};
        add_json(e, {"year", "make", "model", "submodel", "oem_make_model_id", "oem_make_model_submodel_id=id",
                     "created", "modified", "make_id"});
        add_sort(e, {"OemMakeModelSubmodels.name=submodel", "OemMakeModels.name=model", "Makes.name=make",
                     "OemMakeModelSubmodels.year=year", "id"});
        e.default_sort = "year DESC, make ASC, model ASC, submodel ASC, id ASC";
        e.demo_predicate = years_demo();
        es.push_back(e);
    }
    // Trims v2
    {
        Endpoint e = EP(Kind::Search, "trims", "/api/trims/v2", "Trims", "trim");
        e.deprecates = "/api/trims";
        e.filters = {V("year"), V("make"), V("model"), V("series"), V("submodel"), L("trim"), L("description"),
                     V("make_id"), V("model_id"), V("submodel_id")};
        add_json(e, {"year", "make", "model", "series", "submodel", "trim", "description", "make_id", "model_id",
                     "submodel_id", "trim_id=id", "msrp", "invoice", "created", "modified"});
        add_related_trim_json(e, "trim_id");
        add_sort(e, {"MakeModelTrims.year=year", "Makes.name=make", "OemMakeModels.name=model",
                     "OemMakeModelSubmodels.name=submodel", "MakeModelTrims.name=trim", "MakeModelTrims.id=id",
                     "MakeModelTrims.msrp=msrp"});
        e.default_sort = "id ASC";
        e.demo_predicate = years_demo();
        es.push_back(e);
    }
    {
        Endpoint e = EP(Kind::Detail, "trims", "/api/trims/v2/{id}", "Trims", "trim_detail");
        e.deprecates = "/api/trims/{id}";
        e.shape = Shape::Object;
        e.paged = false;
        e.demo_predicate = years_demo();
        es.push_back(e);
    }
    // Trims legacy
    {
        Endpoint e = EP(Kind::Search, "trims", "/api/trims", "Trims", "trim_legacy");
        e.verbose = true;
        e.quirk = Quirk::LegacyTrimVerbose;
        e.filters = {V("year"), L("make"), L("model"), L("trim"), V("make_model_id", "model_id"), V("make_id"),
                     L("description")};
        add_json(e, {"year", "make", "model", "trim", "description", "make_model_id=model_id",
                     "make_model_trim_id=id", "created", "modified", "make_id"});
        add_related_trim_json(e, "trim_id");
        add_sort(e, {"id", "year", "name=trim", "msrp", "invoice", "make_model_id=model_id"});
        e.default_sort = "id ASC";
        e.demo_predicate = years_demo();
        es.push_back(e);
    }
    {
        Endpoint e = EP(Kind::Detail, "trims", "/api/trims/{id}", "Trims", "trim_legacy");
        e.shape = Shape::Object;
        e.paged = false;
        e.verbose = true;
        e.quirk = Quirk::LegacyTrimVerbose;
        e.demo_predicate = years_demo();
        es.push_back(e);
    }
    // Bodies
    {
        Endpoint e = EP(Kind::Search, "bodies", "/api/bodies/v2", "Bodies", "body");
        e.deprecates = "/api/bodies";
        e.filters = identity_filters_v2();
        e.filters.push_back(V("doors"));
        for (const char* l : {"trim", "type"}) e.filters.push_back(L(l));
        e.filters.push_back(L("description", "trim_description"));
        add_json(e, identity_json_v2());
        add_json(e, {"type", "doors", "seats", "length", "width", "height", "wheel_base", "front_track", "rear_track",
                     "ground_clearance", "cargo_capacity", "max_cargo_capacity", "curb_weight", "gross_weight",
                     "max_payload", "max_towing_capacity", "created", "modified"});
        add_sort(e, {"id", "year", "make", "model", "trim", "type", "doors", "seats", "length", "width", "height",
                     "curb_weight"});
        e.default_sort = "id ASC";
        e.demo_predicate = years_demo();
        es.push_back(e);
    }
    {
        Endpoint e = EP(Kind::Search, "bodies", "/api/bodies", "Bodies", "body_legacy");
        e.verbose = true;
        e.filters = {V("make_model_id", "model_id"), V("make_id"), V("year"), V("make_model_trim_id", "trim_id"),
                     V("doors"), L("make"), L("model"), L("trim"), L("type")};
        add_json(e, {"year", "make", "model", "trim", "type", "doors", "seats", "length", "width", "height",
                     "wheel_base", "front_track", "rear_track", "ground_clearance", "cargo_capacity",
                     "max_cargo_capacity", "curb_weight", "gross_weight", "max_payload", "max_towing_capacity"});
        add_json(e, {"make_model_trim_id=trim_id", "created", "modified", "make_id", "make_model_id=model_id"});
        add_sort(e, {"id", "make_model_trim_id=trim_id", "type", "doors", "length", "width", "seats", "height",
                     "wheel_base", "front_track", "rear_track", "ground_clearance", "cargo_capacity",
                     "max_cargo_capacity", "curb_weight", "gross_weight", "max_payload", "max_towing_capacity"});
        e.default_sort = "id ASC";
        e.demo_predicate = years_demo();
        es.push_back(e);
    }
    // Engines
    {
        Endpoint e = EP(Kind::Search, "engines", "/api/engines/v2", "Engines", "engine");
        e.deprecates = "/api/engines";
        e.filters = identity_filters_v2();
        for (const char* v : {"size", "horsepower_hp", "valves"}) e.filters.push_back(V(v));
        e.filters.push_back(L("trim"));
        e.filters.push_back(L("description", "trim_description"));
        for (const char* l : {"cylinders", "valve_timing", "cam_type", "drive_type", "transmission", "engine_type",
                              "fuel_type"})
            e.filters.push_back(L(l));
        add_json(e, identity_json_v2());
        add_json(e, {"fuel_type", "engine_type", "transmission", "drive_type", "cam_type", "valve_timing", "valves",
                     "horsepower_hp", "size", "cylinders", "created", "modified"});
        add_sort(e, {"id", "year", "make", "model", "trim", "engine_type", "fuel_type", "cylinders", "size",
                     "horsepower_hp", "torque_ft_lbs", "valves", "drive_type", "transmission"});
        e.default_sort = "id ASC";
        e.demo_predicate = years_demo();
        es.push_back(e);
    }
    {
        Endpoint e = EP(Kind::Search, "engines", "/api/engines", "Engines", "engine_legacy");
        e.verbose = true;
        e.filters = {V("make_model_trim_id", "trim_id"), V("size"), V("horsepower_hp"), V("valves"),
                     V("make_model_id", "model_id"), V("make_id"), V("year")};
        for (const char* l : {"cylinders", "valve_timing", "cam_type", "drive_type", "transmission", "engine_type",
                              "fuel_type", "make", "model", "trim"})
            e.filters.push_back(L(l));
        add_json(e, {"year", "make", "model", "trim", "fuel_type", "engine_type", "transmission", "drive_type",
                     "cam_type", "valve_timing", "valves", "horsepower_hp", "size", "cylinders", "created",
                     "modified"});
        add_json(e, legacy_json_ids());
        add_sort(e, {"id", "make_model_trim_id=trim_id", "engine_type", "fuel_type", "cylinders", "size",
                     "horsepower_hp", "horsepower_rpm", "torque_ft_lbs", "torque_rpm", "valves", "valve_timing",
                     "cam_type", "drive_type", "transmission"});
        e.default_sort = "id ASC";
        e.demo_predicate = years_demo();
        es.push_back(e);
    }
    // Mileages
    const std::vector<std::string> mileage_json = {"fuel_tank_capacity", "combined_mpg", "epa_city_mpg",
        "epa_highway_mpg", "range_city", "range_highway", "epa_combined_mpg_electric", "epa_city_mpg_electric",
        "epa_highway_mpg_electric", "range_electric", "epa_kwh_100_mi_electric",
        "epa_time_to_charge_hr_240v_electric", "battery_capacity_electric", "created", "modified"};
    {
        Endpoint e = EP(Kind::Search, "mileages", "/api/mileages/v2", "Mileages", "mileage");
        e.deprecates = "/api/mileages";
        e.filters = identity_filters_v2();
        for (const char* v : {"combined_mpg", "epa_city_mpg", "epa_highway_mpg", "range_city", "range_highway"})
            e.filters.push_back(V(v));
        e.filters.push_back(L("trim"));
        e.filters.push_back(L("description", "trim_description"));
        add_json(e, identity_json_v2());
        add_json(e, mileage_json);
        add_sort(e, {"id", "year", "make", "model", "trim", "combined_mpg", "epa_city_mpg", "epa_highway_mpg",
                     "range_city", "range_highway", "range_electric", "fuel_tank_capacity"});
        e.default_sort = "id ASC";
        e.demo_predicate = years_demo();
        es.push_back(e);
    }
    {
        Endpoint e = EP(Kind::Search, "mileages", "/api/mileages", "Mileages", "mileage_legacy");
        e.verbose = true;
        e.filters = {V("make_model_trim_id", "trim_id"), V("make_model_id", "model_id"), V("make_id"), V("year"),
                     V("combined_mpg"), V("epa_city_mpg"), V("epa_highway_mpg"), V("range_city"),
                     V("range_highway"), L("make"), L("model"), L("trim")};
        add_json(e, {"year", "make", "model", "trim"});
        add_json(e, mileage_json);
        add_json(e, legacy_json_ids());
        add_sort(e, {"id", "make_model_trim_id=trim_id", "combined_mpg", "epa_city_mpg", "epa_highway_mpg",
                     "range_city", "range_highway", "fuel_tank_capacity"});
        e.default_sort = "id ASC";
        e.demo_predicate = years_demo();
        es.push_back(e);
    }
    // Colours
    for (const char* kind : {"exterior", "interior"}) {
        const std::string k = kind;
        const std::string cat_name = k == "exterior" ? "Colors (Exterior)" : "Colors (Interior)";
        Endpoint e = EP(Kind::Search, k + "_colors", "/api/" + k + "-colors/v2", cat_name, k + "_color");
        e.deprecates = "/api/" + k + "-colors";
        e.filters = identity_filters_v2();
        e.filters.push_back(V("color"));
        e.filters.push_back(V("rgb"));
        e.filters.push_back(L("trim"));
        e.filters.push_back(L("description", "trim_description"));
        add_json(e, identity_json_v2());
        add_json(e, {"color", "rgb", "modified", "created"});
        add_sort(e, {"id", "year", "make", "model", "trim", "color", "rgb"});
        e.default_sort = "id ASC";
        e.demo_predicate = years_demo();
        es.push_back(e);

        Endpoint l = EP(Kind::Search, k + "_colors", "/api/" + k + "-colors", cat_name, k + "_color_legacy");
        l.verbose = true;
        l.filters = {V("make_model_trim_id", "trim_id"), V("make_model_id", "model_id"), V("make_id"), V("rgb"),
                     V("year"), L("name", "color"), L("make"), L("model"), L("trim")};
        add_json(l, {"year", "make", "model", "trim", "name=color", "rgb", "created", "modified"});
        add_json(l, legacy_json_ids());
        add_sort(l, {"id", "make_model_trim_id=trim_id", "name=color", "rgb"});
        l.default_sort = "id ASC";
        l.demo_predicate = years_demo();
        es.push_back(l);
    }
    // OBD codes
    {
        Endpoint e = EP(Kind::Search, "obd_codes", "/api/obd-codes", "OBD Codes", "obd_code");
        e.filters = {L("code"), L("description")};
        add_sort(e, {"code", "description"});
        e.default_sort = "code ASC";
        e.demo_predicate = "demo = 1";
        es.push_back(e);
        Endpoint d = EP(Kind::Detail, "obd_codes", "/api/obd-codes/{code}", "OBD Codes", "obd_code");
        d.shape = Shape::Object;
        d.paged = false;
        d.demo_predicate = "demo = 1";
        es.push_back(d);
    }
    // Vehicle attributes
    {
        Endpoint e = EP(Kind::Attributes, "vehicle_attributes", "/api/vehicle-attributes", "Vehicle Attributes",
                        "vehicle_attribute");
        e.shape = Shape::Array;
        e.paged = false;
        e.filters = {V("attribute")};
        es.push_back(e);
    }
    // VIN, licence plate
    {
        Endpoint e = EP(Kind::Vin, "vin", "/api/vin/{vin}", "Vin Decoder", "vin_result");
        e.shape = Shape::Object;
        e.paged = false;
        e.verbose = true;
        e.filters = {V("all_trims")};
        es.push_back(e);
        Endpoint p = EP(Kind::Plate, "license_plate", "/api/license-plate", "License Plate", "license_plate");
        p.shape = Shape::Object;
        p.paged = false;
        p.filters = {V("country_code"), V("lookup"), V("region")};
        es.push_back(p);
    }
    // Account, data feeds
    {
        Endpoint e = EP(Kind::AccountRequests, "account", "/api/account/requests", "Account", "usage_day");
        e.shape = Shape::Array;
        e.paged = false;
        es.push_back(e);
        Endpoint t = EP(Kind::AccountToday, "account", "/api/account/requests-today", "Account", "usage_today");
        t.shape = Shape::Object;
        t.paged = false;
        es.push_back(t);
        Endpoint f = EP(Kind::FeedLastUpdated, "data_feed", "/api/data-feeds/last-updated", "Data Feeds",
                        "feed_timestamp");
        f.shape = Shape::Object;
        f.paged = false;
        es.push_back(f);
        Endpoint dl = EP(Kind::FeedDownload, "data_feed", "/api/data-feeds/download", "Data Feeds", "");
        dl.shape = Shape::Object;
        dl.paged = false;
        dl.text_errors = true;
        es.push_back(dl);
    }
    // Login (docs/client.md, "Authentication"): POST token and secret, answered with a JWT as text.
    {
        Endpoint l = EP(Kind::Login, "auth", "/api/auth/login", "Auth", "");
        l.method = "POST";
        l.shape = Shape::Object;
        l.paged = false;
        l.text_errors = true;
        es.push_back(l);
    }

    // The deprecated endpoints: the ones a v2 endpoint replaces.
    for (const auto& v2 : es) {
        if (v2.deprecates.empty()) continue;
        for (auto& old : es)
            if (old.path == v2.deprecates) {
                old.deprecated = true;
                old.replaced_by = v2.path;
            }
    }

    // Resolve json field types (and default columns) from each endpoint's record.
    static const std::vector<Record>& rs = records();
    auto rec_of = [&](const std::string& name) -> const Record* {
        for (const auto& r : rs)
            if (r.name == name) return &r;
        return nullptr;
    };
    for (auto& e : es) {
        const Record* r = rec_of(e.record);
        if (e.table.empty() && r) e.table = r->table;
        const Record* primary = e.table.empty() ? nullptr : table_record(e.table);
        for (auto& j : e.json_fields) {
            const Record* src = r;
            std::string fname = j.column.empty() ? j.name : j.column;
            if (!j.related_table.empty()) {
                src = table_record(j.related_table);
                fname = j.column;
            }
            if (!src) src = primary;
            const Field* f = src ? src->field(fname) : nullptr;
            if (!f && primary) f = primary->field(fname);
            if (!f && src) {  // alias by column (e.g. make_model_trim_id -> trim_id)
                for (const auto& cand : src->fields)
                    if (cand.sql() == fname) { f = &cand; break; }
            }
            if (f) {
                if (j.type == Type::String || j.column.empty()) j.type = f->type;
                j.enum_values = f->enum_values;
                if (j.column.empty()) j.column = std::string(f->sql());
            } else if (j.column.empty()) {
                j.column = j.name;
            }
        }
    }
    return es;
}

}  // namespace

std::string_view type_name(Type t) {
    switch (t) {
        case Type::Int: return "int";
        case Type::Int64: return "int64";
        case Type::Decimal: return "decimal";
        case Type::Float: return "float";
        case Type::String: return "string";
        case Type::Timestamp: return "timestamp";
        case Type::Date: return "date";
        case Type::Bool: return "bool";
        case Type::Nested: return "nested";
    }
    return "unknown";
}

std::string_view sqlite_type(Type t) {
    switch (t) {
        case Type::Int: case Type::Int64: case Type::Bool: return "INTEGER";
        case Type::Decimal: case Type::Float: return "REAL";
        default: return "TEXT";
    }
}

const Field* Record::field(std::string_view n) const {
    for (const auto& f : fields)
        if (f.name == n) return &f;
    return nullptr;
}

std::vector<const Field*> Record::record_fields(bool verbose) const {
    std::vector<const Field*> out;
    for (const auto& f : fields)
        if (f.in_record || (verbose && f.verbose_only)) out.push_back(&f);
    return out;
}

const Filter* Endpoint::filter(std::string_view n) const {
    for (const auto& f : filters)
        if (f.name == n) return &f;
    return nullptr;
}
const JsonField* Endpoint::json_field(std::string_view n) const {
    for (const auto& f : json_fields)
        if (f.name == n) return &f;
    return nullptr;
}
const SortKey* Endpoint::sort_key(std::string_view n) const {
    for (const auto& s : sort_keys)
        if (s.name == n) return &s;
    return nullptr;
}

const std::vector<Record>& records() {
    static const std::vector<Record> rs = build_records();
    return rs;
}
const std::vector<Endpoint>& endpoints() {
    static const std::vector<Endpoint> es = build_endpoints();
    return es;
}
const Record* find_record(std::string_view name) {
    for (const auto& r : records())
        if (r.name == name) return &r;
    return nullptr;
}
const Endpoint* find_endpoint(std::string_view path) {
    for (const auto& e : endpoints())
        if (e.path == path) return &e;
    return nullptr;
}
const Endpoint* find_endpoint(Kind kind, std::string_view resource, bool deprecated) {
    for (const auto& e : endpoints())
        if (e.kind == kind && e.deprecated == deprecated && (resource.empty() || e.resource == resource)) return &e;
    return nullptr;
}
std::string_view path_parameter(const Endpoint& e) {
    const auto open = e.path.find('{');
    if (open == std::string::npos) return {};
    const auto close = e.path.find('}', open);
    return std::string_view(e.path).substr(open + 1, close - open - 1);
}
Quirk record_quirk(const Record& record) {
    for (const auto& e : endpoints())
        if (e.quirk != Quirk::None && e.record == record.name) return e.quirk;
    return Quirk::None;
}
const std::vector<LegacyAlias>& legacy_trim_aliases() {
    static const std::vector<LegacyAlias> as = {
        {"bodies", "make_model_trim_body", true},
        {"engines", "make_model_trim_engine", true},
        {"mileages", "make_model_trim_mileage", true},
        {"exterior_colors", "make_model_trim_exterior_colors", false},
        {"interior_colors", "make_model_trim_interior_colors", false},
    };
    return as;
}

std::string_view kind_name(Kind k) {
    switch (k) {
        case Kind::Search: return "search";
        case Kind::Detail: return "detail";
        case Kind::Years: return "years";
        case Kind::Attributes: return "attributes";
        case Kind::Vin: return "vin";
        case Kind::Plate: return "plate";
        case Kind::AccountRequests: return "account_requests";
        case Kind::AccountToday: return "account_today";
        case Kind::FeedLastUpdated: return "feed_last_updated";
        case Kind::FeedDownload: return "feed_download";
        case Kind::Login: return "login";
    }
    return "unknown";
}
std::string_view quirk_name(Quirk q) {
    switch (q) {
        case Quirk::None: return "";
        case Quirk::LegacyTrimVerbose: return "legacy_trim_verbose";
    }
    return "unknown";
}
const Record* table_record(std::string_view table) {
    for (const auto& r : records())
        if (r.primary && r.table == table) return &r;
    return nullptr;
}

std::string table_demo_predicate(std::string_view table) {
    const Record* r = table_record(table);
    if (!r) return {};
    if (r->field("year")) return years_demo();
    if (r->field("demo")) return "demo = 1";
    return {};
}

std::string related_predicate(std::string_view related_table, std::string_view related_key,
                              std::string_view condition, bool demo) {
    std::string out = "id IN (SELECT ";
    out.append(related_key).append(" FROM ").append(related_table).append(" WHERE ");
    const std::string restriction = demo ? table_demo_predicate(related_table) : std::string();
    if (restriction.empty()) {
        out.append(condition);
    } else {
        out.append("(").append(condition).append(") AND ").append(restriction);
    }
    out.push_back(')');
    return out;
}

const std::vector<Attribute>& attributes() {
    static const std::vector<Attribute> as = {
        {"bodies.type", "bodies", "type"},
        {"engines.cam_type", "engines", "cam_type"},
        {"engines.cylinders", "engines", "cylinders"},
        {"engines.drive_type", "engines", "drive_type"},
        {"engines.engine_type", "engines", "engine_type"},
        {"engines.fuel_type", "engines", "fuel_type"},
        {"engines.transmission", "engines", "transmission"},
        {"engines.valve_timing", "engines", "valve_timing"},
        {"engines.valves", "engines", "valves"},
    };
    return as;
}
const Attribute* find_attribute(std::string_view name) {
    for (const auto& a : attributes())
        if (a.name == name) return &a;
    return nullptr;
}

}  // namespace vehicledata::schema
