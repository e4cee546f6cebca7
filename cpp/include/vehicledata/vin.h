// VIN validation (49 CFR 565) and decoding as NHTSA's vPIC decodes it (spVinDecode), over
// compact in-memory indexes of the vPIC tables.  No I/O here: vehicledata/vin_load.h reads the
// tables (for the emulator and for the client's offline decoder, vehicledata/vin_offline.h).
//
// Thread safety: the free functions are pure.  A Decoder is immutable after construction and
// decode() may run concurrently from any number of threads without locks.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vehicledata::vin {

// ---- validation ----------------------------------------------------------------------------

// Trims ASCII spaces and upper-cases.
std::string normalize(std::string_view raw);
// normalize() into `out` (replaced; its capacity reused: no allocation row after row in a batch).
void normalize_into(std::string_view raw, std::string& out);

// The first rule `vin` (normalized) breaks, as a message ("" when well-formed):
// length 17; every character in the VIN alphabet (0-9, A-Z without I, O, Q); position 9 (check
// digit) 0-9 or X; position 10 (model year) one of A-H J-N P R-T V-Y 1-9.
// The check digit's value is not a rule here: a VIN whose check digit does not compute still
// decodes (vPIC's error code 1).
std::string validation_error(std::string_view vin);

// The check digit of 49 CFR 565.15 (transliteration, weights 8 7 6 5 4 3 2 10 0 9 8 7 6 5 4 3 2,
// sum mod 11, 10 -> 'X') of a 17-character VIN in the VIN alphabet.
char check_digit(std::string_view vin);

// Model year of position 10 in the 2010-2039 cycle (A=2010 ... Y=2030, 1=2031 ... 9=2039), 0 if
// the character is not a model year code.
int year_of_code(char c);

// ---- the vPIC tables, as the loader hands them over ----------------------------------------

struct Tables {
    struct Wmi { int id; std::string code; int manufacturer_id; int vehicle_type_id; int truck_type_id; };
    struct WmiSchema { int wmi_id; int schema_id; int year_from; int year_to; };  // year_to 0: open
    struct Pattern { int id; int schema_id; std::string keys; int element_id; std::string attribute;
                     std::string changed_on; };  // changed_on = ifnull(UpdatedOn, CreatedOn)
    struct Element { int id; std::string name; std::string lookup_table; bool decode; bool is_private;
                     int weight; };
    struct EnginePattern { std::string engine_model; int element_id; std::string attribute; std::string changed_on; };
    struct Conversion { int from_element; int to_element; std::string formula; };

    std::vector<Wmi> wmis;                                  // publicly available ones only
    std::vector<std::pair<int, int>> wmi_makes;             // (wmi id, make id)
    std::vector<WmiSchema> wmi_schemas;
    std::vector<int> schemas_to_be_qced;
    std::vector<Pattern> patterns;
    std::vector<Element> elements;
    std::vector<std::pair<int, int>> make_models;           // (make id, model id)
    std::vector<EnginePattern> engine_patterns;
    std::vector<Conversion> conversions;
    // Names of lookup tables: (table name, id, name); Make, Model, Manufacturer, VehicleType included.
    struct Name { std::string table; std::string id; std::string name; };
    std::vector<Name> names;
};

// ---- decoding ------------------------------------------------------------------------------

// vPIC element ids the callers read.
enum Element : int {
    kBodyClass = 5, kCylinders = 9, kDisplacementCC = 11, kDisplacementL = 13, kDoors = 14,
    kDriveType = 15, kEngineModel = 18, kFuelPrimary = 24, kMake = 26, kManufacturer = 27,
    kModel = 28, kModelYear = 29, kSeries = 34, kTransmission = 37, kTrim = 38, kVehicleType = 39,
    kFuelSecondary = 66, kTrim2 = 109, kSeries2 = 110, kSuggestedVin = 142, kErrorCode = 143,
    kPossibleValues = 144, kAdditionalErrorText = 156, kManufacturerId = 157, kErrorText = 191,
    kDescriptor = 196,
};

// A set of element ids (0-255): the elements a decode is asked for.
struct ElementSet {
    std::array<std::uint64_t, 4> bits{};
    constexpr ElementSet() = default;
    constexpr ElementSet(std::initializer_list<int> ids) {
        for (int e : ids)
            if (e >= 0 && e < 256) bits[static_cast<std::size_t>(e) >> 6] |= 1ull << (e & 63);
    }
    constexpr bool has(int e) const {
        return e >= 0 && e < 256 && ((bits[static_cast<std::size_t>(e) >> 6] >> (e & 63)) & 1u);
    }
};

struct Result {
    enum class Status { ok, unknown_wmi, no_schema };
    Status status = Status::ok;
    std::string wmi;              // 3 characters, or 6 when position 3 is '9'
    int year = 0;                 // the decoded model year
    int make_id = 0;              // vPIC Make.Id (0 when undecoded)
    int model_id = 0;             // vPIC Model.Id (0 when undecoded)
    // Decoded elements in ascending element id: (element id, value).  The values are views into
    // the Decoder's tables or into `buffer` (the values the tables do not hold: the error texts,
    // the model year, values cut from the VIN, multi-valued elements joined): valid while the
    // Decoder and this Result live.  A Result moves (its buffer and views with it) but does not copy.
    std::vector<std::pair<int, std::string_view>> values;
    std::unique_ptr<char[]> buffer;
    std::size_t buffer_capacity = 0;  // the bytes `buffer` holds (a decode into this Result reuses them)
    // The value of an element, or nullptr.
    const std::string_view* get(int element) const;
    // get() of each of `n` element ids in ascending order, in one pass over `values`.
    void get_many(const int* elements, std::size_t n, const std::string_view** out) const;

    Result() = default;
    Result(Result&&) noexcept = default;
    Result& operator=(Result&&) noexcept = default;
    Result(const Result&) = delete;
    Result& operator=(const Result&) = delete;
};

class Decoder {
public:
    explicit Decoder(Tables tables);
    ~Decoder();
    Decoder(const Decoder&) = delete;
    Decoder& operator=(const Decoder&) = delete;

    // Decodes a well-formed VIN (validation_error(vin) empty).  `current_year` bounds the model
    // year as vPIC's getdate() does (a year past current_year + 2 is a cycle earlier).
    Result decode(std::string_view vin, int current_year) const;
    // decode(vin, current_year) into `out` (replaced; the capacity of its values and buffer reused:
    // no allocation decode after decode in a batch).
    void decode(std::string_view vin, int current_year, Result& out) const;
    // decode(vin, current_year, out) for a caller that reads only the elements in `wanted`: status,
    // wmi, year, make and model ids as the full decode's, and `out.values` the full decode's values
    // of the wanted elements (the others left out).  Cheaper: the elements no wanted one depends on
    // (through the error codes, the make, conversions, the model-year choice) are not resolved.
    void decode(std::string_view vin, int current_year, Result& out, const ElementSet& wanted) const;

    // A key of decode(vin)'s answer for a batch's memo: 17 characters into `out`.  Two well-formed
    // VINs with the same key decode (with the same current_year) to the same status, year, make and
    // model ids and element values, except the elements that quote the VIN (Suggested VIN,
    // Descriptor, Possible Values, Additional Error Text) and a decode with error code 2, 3, 4 or 5
    // (its codes weigh check digits of the whole VIN with one position replaced): a memo keeps
    // neither.  The key is the VIN with position 9 replaced by whether the check digit computes
    // ('1' or '0') and each digit in positions 12-17 that neither the WMI nor a pattern key of its
    // schemas reads replaced by '0' (a serial number: only its being a digit counts).
    void answer_key(std::string_view vin, char* out) const;

    // The elements vPIC outputs (Decode set, not private), ascending id: (id, snake_case name).
    const std::vector<std::pair<int, std::string>>& output_elements() const;
    std::size_t pattern_count() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// snake_case of a vPIC element name: "Displacement (L)" -> "displacement_l".
std::string snake_case(std::string_view name);

}  // namespace vehicledata::vin
