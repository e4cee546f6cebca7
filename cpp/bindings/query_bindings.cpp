// Conditions bindings (placeholder until the query module lands).
#include <pybind11/pybind11.h>
namespace py = pybind11;
namespace vehicledata::bindings {
void bind_query(py::module_&) {}
}  // namespace vehicledata::bindings
