// vehicledata._core: the only translation units that know Python.
#include <pybind11/pybind11.h>

namespace py = pybind11;

namespace vehicledata::bindings {
void bind_schema(py::module_& m);
void bind_query(py::module_& m);
void bind_vin(py::module_& m);
void bind_format(py::module_& m);
void bind_envelope(py::module_& m);
#ifdef VEHICLEDATA_HAS_CLIENT
void bind_client(py::module_& m);
void bind_vin_decoder(py::module_& m);  // after bind_client (its pages)
#endif
}  // namespace vehicledata::bindings

PYBIND11_MODULE(_core, m) {
    m.doc() = "vehicledata C++ core: schema table, conditions, HTTP client";
    m.attr("__version__") = VEHICLEDATA_VERSION;
    vehicledata::bindings::bind_schema(m);
    vehicledata::bindings::bind_query(m);
    vehicledata::bindings::bind_vin(m);
    vehicledata::bindings::bind_format(m);
    vehicledata::bindings::bind_envelope(m);
#ifdef VEHICLEDATA_HAS_CLIENT
    vehicledata::bindings::bind_client(m);
    vehicledata::bindings::bind_vin_decoder(m);
#endif
}
