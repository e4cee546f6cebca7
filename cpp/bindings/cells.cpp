// Page cells -> Python objects: see cells.h.
#include "cells.h"

#include <datetime.h>

#include "vehicledata/format.h"

namespace py = pybind11;
namespace vc = vehicledata::client;

namespace vehicledata::bindings {

PyObject* TzCache::get(int minutes) {
    auto it = zones.find(minutes);
    if (it != zones.end()) return it->second.ptr();
    py::object delta = py::reinterpret_steal<py::object>(PyDelta_FromDSU(0, minutes * 60, 0));
    if (!delta) throw py::error_already_set();
    py::object tz = py::reinterpret_steal<py::object>(PyTimeZone_FromOffset(delta.ptr()));
    if (!tz) throw py::error_already_set();
    return zones.emplace(minutes, tz).first->second.ptr();
}

namespace {

PyObject* timestamp(std::int64_t us, int offset_minutes, TzCache& tz) {
    std::int64_t local = us + static_cast<std::int64_t>(offset_minutes) * 60 * 1000000;
    std::int64_t secs = local >= 0 ? local / 1000000 : -((-local + 999999) / 1000000);
    int micro = static_cast<int>(local - secs * 1000000);
    std::int64_t days = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
    int sod = static_cast<int>(secs - days * 86400);
    int y = 0;
    unsigned m = 0, d = 0;
    format::civil_from_days(days, y, m, d);
    if (!PyDateTimeAPI) PyDateTime_IMPORT;  // the C API table is per translation unit
    if (!PyDateTimeAPI) return nullptr;
    PyObject* zone = nullptr;
    try {
        zone = tz.get(offset_minutes);
    } catch (py::error_already_set& e) {
        e.restore();
        return nullptr;
    }
    return PyDateTimeAPI->DateTime_FromDateAndTime(y, static_cast<int>(m), static_cast<int>(d), sod / 3600,
                                                   (sod / 60) % 60, sod % 60, micro, zone,
                                                   PyDateTimeAPI->DateTimeType);
}

}  // namespace

PyObject* cell(const vc::Column& c, std::size_t i, TzCache& tz) {
    if (!c.valid[i]) Py_RETURN_NONE;
    switch (c.kind) {
        case vc::ColumnKind::Int64: return PyLong_FromLongLong(c.ints[i]);
        case vc::ColumnKind::Bool: return PyBool_FromLong(c.ints[i] != 0);
        case vc::ColumnKind::Float64: return PyFloat_FromDouble(c.floats[i]);
        case vc::ColumnKind::Timestamp: return timestamp(c.ints[i], c.utc_offset_minutes[i], tz);
        case vc::ColumnKind::String: case vc::ColumnKind::Json: {
            auto s = c.str(i);
            return PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace");
        }
    }
    Py_RETURN_NONE;
}

}  // namespace vehicledata::bindings
