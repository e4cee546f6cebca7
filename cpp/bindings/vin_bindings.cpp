// vehicledata._core: VIN validation (the same C++ as the emulator's).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "vehicledata/vin.h"
#include "vehicledata/vin_trims.h"

namespace py = pybind11;

namespace vehicledata::bindings {

void bind_vin(py::module_& m) {
    m.def("vin_normalize", [](std::string_view raw) { return vin::normalize(raw); }, py::arg("vin"),
          "Strip spaces and upper-case.");
    m.def("vin_validation_error", [](std::string_view normalized) { return vin::validation_error(normalized); },
          py::arg("vin"), "The first VIN rule broken by a normalized VIN, or '' when it is well-formed.");
    m.def("vin_invalid_message", [](std::string_view raw) { return vin::invalid_message(raw); }, py::arg("vin"),
          "The API's 400 message for a VIN as sent (a long one echoed cut, its length named), or '' when it is "
          "well-formed once normalized.");
    m.def("vin_check_digit", [](std::string_view normalized) { return std::string(1, vin::check_digit(normalized)); },
          py::arg("vin"), "The 49 CFR 565 check digit of a 17-character VIN ('?' outside the VIN alphabet).");
}

}  // namespace vehicledata::bindings
