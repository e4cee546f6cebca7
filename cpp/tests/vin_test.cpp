// VIN validation, check digit, conversions and vPIC's decoding rules over small hand-made tables.
#include <gtest/gtest.h>

#include "../core/vin_decimal.h"
#include "vehicledata/vin.h"

using namespace vehicledata;

TEST(VinValidate, Rules) {
    EXPECT_EQ(vin::validation_error("1GTG6CEN0L1139305"), "");
    EXPECT_EQ(vin::validation_error("1GTG6CEN0L113930"), "expected 17 characters, got 16");
    EXPECT_EQ(vin::validation_error("1GTG6CEN0L113930Q"),
              "character 'Q' at position 17 is not in the VIN alphabet (0-9 and A-Z without I, O, Q)");
    EXPECT_EQ(vin::validation_error(std::string("1GTG6CEN0L113930\x01", 17)),
              "character '\\x01' at position 17 is not in the VIN alphabet (0-9 and A-Z without I, O, Q)");
    EXPECT_EQ(vin::validation_error("1GTG6CENBL1139305"), "position 9 (check digit) must be 0-9 or X, got 'B'");
    EXPECT_EQ(vin::validation_error("1GTG6CEN0Z1139305"),
              "position 10 (model year) must be one of A-H, J-N, P, R-T, V-Y, 1-9, got 'Z'");
    EXPECT_EQ(vin::normalize("  1gtg6cen0l1139305 "), "1GTG6CEN0L1139305");
}

TEST(VinValidate, CheckDigitAndYears) {
    EXPECT_EQ(vin::check_digit("1GTG6CEN0L1139305"), '0');
    EXPECT_EQ(vin::check_digit("KNDJ23AU4N7154467"), '4');
    EXPECT_EQ(vin::check_digit("1HGCM82633A004352"), '3');
    EXPECT_EQ(vin::check_digit("11111111111111111"), '1');
    EXPECT_EQ(vin::check_digit("1M8GDM9AXKP042788"), 'X');  // 49 CFR 565 example: remainder 10
    EXPECT_EQ(vin::year_of_code('A'), 2010);
    EXPECT_EQ(vin::year_of_code('Y'), 2030);
    EXPECT_EQ(vin::year_of_code('1'), 2031);
    EXPECT_EQ(vin::year_of_code('U'), 0);
    EXPECT_EQ(vin::snake_case("Displacement (L)"), "displacement_l");
    EXPECT_EQ(vin::snake_case("Fuel Type - Primary"), "fuel_type_primary");
}

TEST(VinDecimal, TsqlArithmetic) {
    EXPECT_EQ(vin::Formula::parse("#x# * 1000").apply("3.6"), "3600.0");
    EXPECT_EQ(vin::Formula::parse("#x# / 0.016387064 ").apply("3.6"), "219.68547874103");
    EXPECT_EQ(vin::Formula::parse("#x# / 1000.").apply("1998"), "1.998000");
    EXPECT_EQ(vin::Formula::parse("#x# * 1000").apply("2"), "2000");
    EXPECT_EQ(vin::Formula::parse("#x# * 1000").apply("n/a"), "0");
    EXPECT_FALSE(vin::Formula::parse("sqrt(#x#)").valid);
}

namespace {

// WMI "1AB" (passenger car) with two schemas; WMI "1A9" + "XYZ" a 6-character one (truck).
vin::Tables tables() {
    vin::Tables t;
    t.wmis = {{1, "1AB", 7, 2, 0}, {2, "1A9XYZ", 0, 3, 0}};
    t.wmi_makes = {{1, 10}, {2, 11}};
    t.wmi_schemas = {{1, 100, 2000, 2015}, {1, 101, 2010, 0}, {2, 200, 1990, 2030}};
    t.elements = {{5, "Body Class", "BodyStyle", true, false, 99}, {26, "Make", "Make", true, false, 99},
                  {27, "Manufacturer Name", "Manufacturer", true, false, 0}, {28, "Model", "Model", true, false, 99},
                  {29, "Model Year", "", true, false, 99}, {38, "Trim", "", true, false, 61},
                  {39, "Vehicle Type", "VehicleType", true, false, 99}, {13, "Displacement (L)", "", true, false, 0},
                  {11, "Displacement (CC)", "", true, false, 98}, {143, "Error Code", "ErrorCode", true, false, 0},
                  {191, "Error Text", "", true, false, 0}, {98, "NCSA Model", "", true, true, 0}};
    t.patterns = {
        // Model: the schema with the later YearFrom wins (priority = Wmi_VinSchema.YearFrom).
        {1, 100, "CD", 28, "1000", "2015-01-01"},
        {2, 101, "C*", 28, "1001", "2014-01-01"},
        // Trim: same priority and date, the shorter key wins; a class and a range.
        {3, 101, "C[D-F]", 38, "Long", "2014-01-01"},
        {4, 101, "C", 38, "Short", "2014-01-01"},
        // Body: only matches when position 11 (after '|', 10) is P.
        {5, 101, "*****|*P", 5, "13", "2014-01-01"},
        {6, 101, "**E", 13, "2.0", "2014-01-01"},
        {7, 200, "*", 28, "1002", "2014-01-01"},
        {8, 101, "CD", 98, "secret", "2014-01-01"},
    };
    t.make_models = {{10, 1000}, {10, 1001}, {11, 1002}};
    t.conversions = {{13, 11, "#x# * 1000"}};
    t.names = {{"Make", "10", "Acme"}, {"Make", "11", "Tiny"}, {"Model", "1000", "Old"}, {"Model", "1001", "New"},
               {"Model", "1002", "Truck"}, {"Manufacturer", "7", "Acme Motors"}, {"VehicleType", "2", "Passenger Car"},
               {"VehicleType", "3", "Truck"}, {"BodyStyle", "13", "Sedan/Saloon"}};
    return t;
}

std::string value(const vin::Result& r, int e) {
    const std::string_view* v = r.get(e);
    return v ? std::string(*v) : "<none>";
}

}  // namespace

TEST(VinDecode, PatternPrecedenceAndLookups) {
    vin::Decoder d(tables());
    // Position 7 'A' (alphabetic) for a passenger car: the 2010 cycle; 'E' = 2014.
    std::string vin = "1ABCDEA00EP000000";
    vin[8] = vin::check_digit(vin);
    const vin::Result r = d.decode(vin, 2026);
    ASSERT_EQ(r.status, vin::Result::Status::ok);
    EXPECT_EQ(r.year, 2014);
    EXPECT_EQ(value(r, vin::kModel), "New");        // schema 101 (YearFrom 2010) beats 100 (2000)
    EXPECT_EQ(value(r, vin::kMake), "ACME");        // from the model (Make_Model), upper-cased as vPIC
    EXPECT_EQ(r.make_id, 10);
    EXPECT_EQ(r.model_id, 1001);
    EXPECT_EQ(value(r, vin::kTrim), "Short");       // fewer non-'*' key characters wins
    EXPECT_EQ(value(r, vin::kBodyClass), "Sedan/Saloon");
    EXPECT_EQ(value(r, vin::kManufacturer), "ACME MOTORS");
    EXPECT_EQ(value(r, vin::kVehicleType), "PASSENGER CAR");
    EXPECT_EQ(value(r, vin::kModelYear), "2014");
    EXPECT_EQ(value(r, vin::kDisplacementCC), "2000.0");  // Conversion 13 -> 11
    EXPECT_EQ(value(r, vin::kErrorCode), "0");
    EXPECT_EQ(value(r, 98), "<none>");                     // private element: not output
    // Position 7 numeric: the 1980 cycle, where no schema applies.
    std::string old = "1ABCDE100EP000000";
    old[8] = vin::check_digit(old);
    const vin::Result o = d.decode(old, 2026);
    EXPECT_EQ(o.year, 1984);
    EXPECT_EQ(o.status, vin::Result::Status::no_schema);
}

TEST(VinDecode, CheckDigitWarningSixCharacterWmiAndUnknown) {
    vin::Decoder d(tables());
    std::string vin = "1ABCDEA00EP000000";
    vin[8] = vin::check_digit(vin) == '1' ? '2' : '1';
    const vin::Result r = d.decode(vin, 2026);
    EXPECT_EQ(value(r, vin::kErrorCode), "1");
    EXPECT_EQ(value(r, vin::kErrorText), "1 - Check Digit (9th position) does not calculate properly");
    // 3rd character '9': the WMI continues in positions 12-14.
    std::string small = "1A9ZZZZ00EPXYZ123";
    small[8] = vin::check_digit(small);
    const vin::Result s = d.decode(small, 2026);
    EXPECT_EQ(s.wmi, "1A9XYZ");
    EXPECT_EQ(value(s, vin::kModel), "Truck");
    EXPECT_EQ(value(s, vin::kMake), "TINY");
    EXPECT_EQ(s.year, 2014);  // trucks: both cycles decoded, 1984 has no model
    EXPECT_EQ(d.decode("9ZZCDEA00EP000000", 2026).status, vin::Result::Status::unknown_wmi);
}

// answer_key: the serial digits no key reads fold to '0', position 9 becomes whether the check
// digit computes; VINs of one key decode alike but for the elements that quote the VIN.
TEST(VinDecode, AnswerKeyFoldsWhatNoKeyReads) {
    vin::Tables t = tables();
    t.elements.push_back({34, "Series", "", true, false, 0});
    t.patterns.push_back({9, 101, "*****|***7", 34, "Seven", "2014-01-01"});  // reads position 13
    vin::Decoder d(t);
    auto with_check = [](std::string v) { v[8] = vin::check_digit(v); return v; };
    auto key = [&](const std::string& v) { char k[17]; d.answer_key(v, k); return std::string(k, 17); };
    const std::string a = with_check("1ABCDEA00EP000000"), b = with_check("1ABCDEA00EP105432");
    EXPECT_EQ(key(a), "1ABCDEA01EP000000");
    EXPECT_EQ(key(b), key(a));
    std::string bad = b;
    bad[8] = bad[8] == '1' ? '2' : '1';
    EXPECT_EQ(key(bad), "1ABCDEA00EP000000");  // the check digit does not compute
    const std::string seven = with_check("1ABCDEA00EP070000");
    EXPECT_EQ(key(seven), "1ABCDEA01EP070000");  // position 13 is read by a key
    EXPECT_EQ(key(with_check("1ABCDEA00EP00A000")), "1ABCDEA01EP00A000");  // a letter stays (code 400)
    const std::string small = with_check("1A9ZZZZ00EPXYZ123");
    EXPECT_EQ(key(small).substr(9), "EPXYZ000");  // positions 12-14 are the WMI's
    auto same_values = [](const vin::Result& x, const vin::Result& y) {
        auto skip = [](int e) {
            return e == vin::kSuggestedVin || e == vin::kPossibleValues || e == vin::kAdditionalErrorText ||
                   e == vin::kDescriptor;
        };
        std::vector<std::pair<int, std::string>> vx, vy;
        for (const auto& [e, v] : x.values) if (!skip(e)) vx.emplace_back(e, std::string(v));
        for (const auto& [e, v] : y.values) if (!skip(e)) vy.emplace_back(e, std::string(v));
        return x.status == y.status && x.year == y.year && x.make_id == y.make_id && x.model_id == y.model_id && vx == vy;
    };
    EXPECT_TRUE(same_values(d.decode(a, 2026), d.decode(b, 2026)));
    EXPECT_EQ(value(d.decode(seven, 2026), vin::kSeries), "Seven");
    EXPECT_EQ(value(d.decode(a, 2026), vin::kSeries), "<none>");
    EXPECT_EQ(value(d.decode(bad, 2026), vin::kErrorCode), "1");
}

// A schema with many keys (the decoder indexes their characters per position): the same
// precedence as a small schema, formula keys on digits, a key past the descriptor's 14.
TEST(VinDecode, SchemaWithManyKeys) {
    vin::Tables t = tables();
    int id = 100;
    for (char c : std::string("ABCDEFGHJKLMNPRSTUVWXYZ0123456789")) {
        // Series by position 5: the plain key "C<c>" beats the class "C[<c>]" (fewer key characters).
        t.patterns.push_back({++id, 101, std::string("C") + c, 34, std::string("S-") + c, "2014-01-01"});
        t.patterns.push_back({++id, 101, std::string("C[") + c + "]", 34, std::string("Class-") + c, "2014-01-01"});
    }
    t.patterns.push_back({++id, 101, "*****|***#", 109, "#", "2014-01-01"});  // Trim2: position 13, a digit
    t.patterns.push_back({++id, 101, "*****|*****************", 109, "never", "2014-01-01"});  // too long
    t.elements.push_back({34, "Series", "", true, false, 60});
    t.elements.push_back({109, "Trim2", "", true, false, 60});
    vin::Decoder d(t);
    auto decode = [&](std::string vin) {
        vin[8] = vin::check_digit(vin);
        return d.decode(vin, 2026);
    };
    const vin::Result r = decode("1ABCKEA00EP070000");
    ASSERT_EQ(r.status, vin::Result::Status::ok);
    EXPECT_EQ(value(r, vin::kSeries), "S-K");
    EXPECT_EQ(value(r, vin::kTrim2), "7");  // the formula key's digit
    EXPECT_EQ(value(r, vin::kTrim), "Short");
    EXPECT_EQ(value(r, vin::kModel), "New");
    const vin::Result q = decode("1ABC7EA00EP0A0000");
    EXPECT_EQ(value(q, vin::kSeries), "S-7");
    EXPECT_EQ(value(q, vin::kTrim2), "<none>");  // position 13 'A': the '#' key does not match
    EXPECT_EQ(value(decode("1ABDKEA00EP070000"), vin::kSeries), "<none>");  // position 4 not 'C'
}

// The values are views (into the tables, or into the Result's own buffer for the texts the decode
// builds): they stay as decoded through later decodes on the same thread and through a move; a
// multi-valued element's values are joined with "; ".
TEST(VinDecode, ValuesOutliveLaterDecodesAndMoves) {
    vin::Tables t = tables();
    t.elements.push_back({114, "Other Restraint System Info", "", true, false, 0});
    t.patterns.push_back({9, 101, "C", 114, "One", "2014-01-01"});
    t.patterns.push_back({10, 101, "CD", 114, "Two", "2014-01-01"});
    vin::Decoder d(t);
    std::string a = "1ABCDEA00EP000000";
    a[8] = vin::check_digit(a) == '1' ? '2' : '1';  // error code 1: texts built per decode
    vin::Result r = d.decode(a, 2026);
    ASSERT_EQ(r.status, vin::Result::Status::ok);
    std::vector<std::pair<int, std::string>> before;
    for (const auto& [e, v] : r.values) before.emplace_back(e, std::string(v));
    std::string b = "1ABCDEA00FP000000";
    b[8] = vin::check_digit(b);
    const vin::Result other = d.decode(b, 2026);
    EXPECT_EQ(value(other, vin::kModelYear), "2015");
    EXPECT_EQ(value(other, vin::kErrorCode), "0");
    const vin::Result moved = std::move(r);
    std::vector<std::pair<int, std::string>> after;
    for (const auto& [e, v] : moved.values) after.emplace_back(e, std::string(v));
    EXPECT_EQ(after, before);
    EXPECT_EQ(value(moved, 114), "One; Two");  // shorter key first
    EXPECT_EQ(value(moved, vin::kModelYear), "2014");
    EXPECT_EQ(value(moved, vin::kErrorText), "1 - Check Digit (9th position) does not calculate properly");
    EXPECT_EQ(value(moved, vin::kModel), "New");
}

// Model year position 10 of a truck is not conclusive: both 30-year cycles are decoded and the
// better answer wins (the later cycle on a tie, e.g. when the same schemas cover both years).
TEST(VinDecode, ModelYearCycles) {
    std::string vin = "1A9ZZZZ00EPXYZ123";
    vin[8] = vin::check_digit(vin);
    {
        vin::Tables t = tables();
        t.wmi_schemas[2] = {2, 200, 1980, 2030};  // one schema for 1984 and 2014
        vin::Decoder d(t);
        const vin::Result r = d.decode(vin, 2026);
        EXPECT_EQ(r.year, 2014);
        EXPECT_EQ(value(r, vin::kModelYear), "2014");
        EXPECT_EQ(value(r, vin::kModel), "Truck");
    }
    {
        vin::Tables t = tables();
        t.patterns[6].keys = "A";                        // schema 200 (1990-2030): no key matches
        t.wmi_schemas.push_back({2, 201, 1980, 1989});  // schema 201: a model for 1984
        t.patterns.push_back({9, 201, "Z", 28, "1002", "2014-01-01"});
        vin::Decoder d(t);
        const vin::Result r = d.decode(vin, 2026);
        EXPECT_EQ(r.year, 1984);
        EXPECT_EQ(value(r, vin::kModelYear), "1984");
        EXPECT_EQ(value(r, vin::kModel), "Truck");
        EXPECT_EQ(value(r, vin::kErrorCode), "0");
    }
}

// decode(vin, year, out, wanted): the full decode's status, year, ids and values of the wanted
// elements, whatever those depend on (a conversion's source, the model for the make, the error
// codes, the choice between model-year cycles) and whether or not it is wanted too.
TEST(VinDecode, WantedElementsAsTheFullDecode) {
    auto same_wanted = [](const vin::Decoder& d, const std::string& vin, const vin::ElementSet& wanted) {
        const vin::Result full = d.decode(vin, 2026);
        vin::Result some;
        d.decode(vin, 2026, some, wanted);
        EXPECT_EQ(some.status, full.status) << vin;
        EXPECT_EQ(some.year, full.year) << vin;
        EXPECT_EQ(some.make_id, full.make_id) << vin;
        EXPECT_EQ(some.model_id, full.model_id) << vin;
        std::vector<std::pair<int, std::string>> expect, got;
        for (const auto& [e, v] : full.values)
            if (wanted.has(e)) expect.emplace_back(e, std::string(v));
        for (const auto& [e, v] : some.values) got.emplace_back(e, std::string(v));
        EXPECT_EQ(got, expect) << vin;
    };
    std::string car = "1ABCDEA00EP000000", bad = car, truck = "1A9ZZZZ00EPXYZ123", old = "1ABCDE100EP000000";
    car[8] = vin::check_digit(car);
    bad[8] = vin::check_digit(bad) == '1' ? '2' : '1';
    truck[8] = vin::check_digit(truck);
    old[8] = vin::check_digit(old);
    const vin::ElementSet sets[] = {{vin::kDisplacementCC},  // a conversion's target, not its source
                                    {vin::kMake, vin::kErrorCode, vin::kErrorText},
                                    {vin::kTrim, vin::kBodyClass, vin::kModelYear, vin::kSuggestedVin},
                                    {}};
    vin::Tables two = tables();
    two.patterns[6].keys = "A";                        // the truck: a model only in the 1984 cycle
    two.wmi_schemas.push_back({2, 201, 1980, 1989});
    two.patterns.push_back({9, 201, "Z", 28, "1002", "2014-01-01"});
    for (const vin::Tables& t : {tables(), two}) {
        vin::Decoder d(t);
        for (const std::string& vin : {car, bad, truck, old})
            for (const vin::ElementSet& wanted : sets) same_wanted(d, vin, wanted);
    }
    vin::Decoder d(tables());
    vin::Result r;
    d.decode(car, 2026, r, {vin::kDisplacementCC});
    ASSERT_EQ(r.values.size(), 1u);
    EXPECT_EQ(r.values[0].second, "2000.0");
}
