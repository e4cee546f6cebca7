// One cell of a decoded page column as a Python object (shared by Page.to_lists
// and the record views of record_bindings.cpp).
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <unordered_map>

#include "vehicledata/client/page.h"

namespace vehicledata::bindings {

// datetime.timezone objects by UTC offset in minutes, made once each.
struct TzCache {
    std::unordered_map<int, pybind11::object> zones;
    PyObject* get(int minutes);  // borrowed
};

// A new reference to row i of a non-Json column: None for nulls, int, bool,
// float, str, or a datetime with the offset the value was served with.
// Json columns give their JSON text as str.  nullptr with a Python error set
// on failure.  Call PyDateTime_IMPORT (bind_client does) before the first call.
PyObject* cell(const client::Column& c, std::size_t i, TzCache& tz);

}  // namespace vehicledata::bindings
