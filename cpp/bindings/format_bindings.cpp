// vehicledata._core.format: the core's US Eastern time rules (format.h), for the
// dataset builder's timestamps; one DST rule set for the client, emulator and builder.
#include <pybind11/pybind11.h>

#include <cstdint>

#include "vehicledata/format.h"

namespace py = pybind11;

namespace vehicledata::bindings {

void bind_format(py::module_& m) {
    py::module_ fm = m.def_submodule("format", "US Eastern time as the service writes it (C++ core)");
    fm.def("eastern_offset_seconds", &format::eastern_offset_seconds, py::arg("utc_epoch"),
           "US Eastern offset from UTC at a UTC epoch second: -14400 (EDT) or -18000 (EST).");
    fm.def("eastern_datetime", &format::eastern_datetime, py::arg("utc_epoch"),
           "\"YYYY-MM-DD HH:MM:SS\" in US Eastern local time.");
    fm.def("eastern_iso8601", &format::eastern_iso8601, py::arg("utc_epoch"),
           "\"YYYY-MM-DDTHH:MM:SS-04:00\": US Eastern local time with its offset.");
}

}  // namespace vehicledata::bindings
