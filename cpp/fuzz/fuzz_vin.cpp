// Fuzz target: VIN normalization, validation, check digit and decoding (over small hand-made
// vPIC tables with classes, ranges, negation, '#' formula keys and a 6-character WMI).
// Any input must return without crash, hang or undefined behaviour; a VIN that validates decodes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "vehicledata/vin.h"

namespace {

const vehicledata::vin::Decoder& decoder() {
    static const vehicledata::vin::Decoder d([] {
        vehicledata::vin::Tables t;
        t.wmis = {{1, "1AB", 7, 2, 0}, {2, "1A9XYZ", 0, 3, 0}, {3, "JT1", 0, 3, 1}};
        t.wmi_makes = {{1, 10}, {2, 11}, {3, 10}, {3, 11}};
        t.wmi_schemas = {{1, 100, 1980, 2015}, {1, 101, 2010, 0}, {2, 200, 1990, 2039}, {3, 100, 1981, 2039}};
        t.elements = {{5, "Body Class", "BodyStyle", true, false, 99}, {28, "Model", "Model", true, false, 99},
                      {38, "Trim", "", true, false, 61}, {13, "Displacement (L)", "", true, false, 0},
                      {11, "Displacement (CC)", "", true, false, 98}, {65, "Front Air Bag Locations", "", true, false, 64},
                      {18, "Engine Model", "", true, false, 55}, {121, "Other Restraint System Info", "", true, false, 0}};
        t.patterns = {{1, 100, "C[D-F]", 28, "1000", "2015"},   {2, 101, "C*", 28, "1001", "2014"},
                      {3, 101, "[^A-C]*|*P", 38, "X", "2014"},  {4, 101, "**#", 13, "##", "2014"},
                      {5, 200, "*", 28, "1002", "2014"},        {6, 100, "[A-Z0-9][12345]", 65, "3", "2014"},
                      {7, 101, "**E%", 18, "ENG", "2014"},      {8, 101, "*****|**[0-9]", 121, "a", "2014"},
                      {9, 101, "*****|**[0-9]", 121, "b", "2013"}, {10, 100, "[", 38, "broken", "2014"},
                      {11, 100, "***************************", 38, "long", "2014"}};
        t.engine_patterns = {{"ENG", 13, "3.5", "2014"}};
        t.make_models = {{10, 1000}, {10, 1001}, {11, 1002}};
        t.conversions = {{13, 11, "#x# * 1000"}, {11, 13, "#x# / 1000."}};
        t.names = {{"Make", "10", "Acme"}, {"Make", "11", "Tiny"}, {"Model", "1000", "Old"}, {"Model", "1001", "New"}};
        return t;
    }());
    return d;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string raw(reinterpret_cast<const char*>(data), size);
    const std::string vin = vehicledata::vin::normalize(raw);
    (void)vehicledata::vin::check_digit(vin);
    if (!vehicledata::vin::validation_error(vin).empty()) return 0;
    const int current = 2000 + static_cast<int>(size % 40);
    const auto r = decoder().decode(vin, current);
    if (r.status == vehicledata::vin::Result::Status::ok && r.year < 1980) __builtin_trap();
    return 0;
}
