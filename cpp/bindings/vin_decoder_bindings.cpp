// vehicledata._core.VinDecoder: the offline VIN decoder (vehicledata/vin_offline.h) and its batch
// decode into pages (vehicledata/client/vin_batch.h); python/vehicledata/vin.py is its face.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "vehicledata/client/arrow_export.h"
#include "vehicledata/client/vin_batch.h"
#include "vehicledata/vin_offline.h"

#include "client_objects.h"

namespace py = pybind11;
namespace vc = vehicledata::client;

namespace vehicledata::bindings {

namespace {

const char* kind_name(vin::Answer::Kind k) {
    switch (k) {
        case vin::Answer::Kind::ok: return "ok";
        case vin::Answer::Kind::invalid: return "invalid";
        case vin::Answer::Kind::not_found: return "not_found";
    }
    return "ok";
}

py::object text_or_none(const std::string_view* v) {
    if (!v) return py::none();
    return py::str(v->data(), v->size());
}

// (kind, message, record) with record the fields of /api/vin/{vin} (trims as their ids), or None.
py::tuple answer_tuple(const vin::Offline& d, const vin::Answer& a) {
    if (a.kind != vin::Answer::Kind::ok) return py::make_tuple(kind_name(a.kind), a.message, py::none());
    const vin::Result& r = a.result;
    py::dict specs;
    auto v = r.values.begin();
    for (const auto& [id, key] : d.decoder().output_elements()) {
        while (v != r.values.end() && v->first < id) ++v;
        specs[py::str(key)] = v != r.values.end() && v->first == id ? py::str(v->second.data(), v->second.size())
                                                                      : py::object(py::none());
    }
    py::list trims;
    for (const auto& [score, id] : a.trims) trims.append(id);
    py::dict rec;
    rec["year"] = r.year;
    rec["make"] = a.make;
    rec["model"] = text_or_none(r.get(vin::kModel));
    rec["trim"] = text_or_none(r.get(vin::kTrim));
    rec["specs"] = specs;
    rec["trim_ids"] = trims;
    return py::make_tuple("ok", "", rec);
}

// Whether the calling thread is Python's main thread (GIL held).
bool on_main_thread() {
    py::module_ threading = py::module_::import("threading");
    return threading.attr("main_thread")().is(threading.attr("current_thread")());
}

vc::VinInput input_of(py::capsule schema_capsule, py::capsule array_capsule) {
    auto* schema = static_cast<ArrowSchema*>(PyCapsule_GetPointer(schema_capsule.ptr(), "arrow_schema"));
    auto* array = static_cast<ArrowArray*>(PyCapsule_GetPointer(array_capsule.ptr(), "arrow_array"));
    if (!schema || !array) throw py::error_already_set();
    if (!array->release) throw py::value_error("the Arrow array was released");
    vc::VinInput in;
    if (std::strcmp(schema->format, "U") == 0) in.large = true;
    else if (std::strcmp(schema->format, "u") == 0) in.large = false;
    else throw py::type_error(std::string("VINs must be an Arrow string array, not format '") + schema->format + "'");
    if (array->n_buffers != 3) throw py::value_error("an Arrow string array has 3 buffers");
    in.length = array->length;
    in.offset = array->offset;
    in.validity = array->null_count == 0 ? nullptr : static_cast<const std::uint8_t*>(array->buffers[0]);
    in.offsets = array->buffers[1];
    in.data = static_cast<const char*>(array->buffers[2]);
    return in;
}

}  // namespace

void bind_vin_decoder(py::module_& m) {
    py::class_<vin::Offline, std::shared_ptr<vin::Offline>>(
        m, "VinDecoder", "The offline VIN decoder over a built dataset's vPIC tables and trims (vehicledata.vin.Decoder).")
        .def(py::init([](const std::string& path) {
                 py::gil_scoped_release release;
                 try {
                     return std::make_shared<vin::Offline>(path);
                 } catch (const vin::LoadError& e) {
                     py::gil_scoped_acquire gil;
                     throw py::value_error(e.what());
                 }
             }),
             py::arg("path"), "Opens the dataset database `path` and loads its vPIC tables (about 2 s; GIL released).")
        .def_property_readonly("path", &vin::Offline::path)
        .def("decode", [](const vin::Offline& d, const std::string& raw, bool all_trims, int current_year) {
                 vin::Answer a;
                 {
                     py::gil_scoped_release release;
                     a = d.decode(raw, all_trims, current_year > 0 ? current_year : vin::current_year_utc());
                 }
                 return answer_tuple(d, a);
             },
             py::arg("vin"), py::arg("all_trims") = false, py::arg("current_year") = 0,
             "(kind, message, record): kind 'ok' (record: year, make, model, trim, specs, trim_ids), 'invalid' "
             "(the API's 400 message) or 'not_found' (its 404 message; record None).  `current_year`: the year "
             "model-year codes are read against (0: this year, UTC; the golden VIN file fixes it).")
        .def("decode_arrow", [](const vin::Offline& d, py::capsule schema, py::capsule array, int threads,
                                int current_year) {
                 const vc::VinInput in = input_of(schema, array);
                 // Python runs signal handlers on its main thread only: elsewhere (a Dask or Spark worker's
                 // thread) no check, so the GIL is not taken every 50 ms for nothing.
                 std::function<bool()> check;
                 if (on_main_thread()) check = interrupt_requested;
                 std::vector<std::shared_ptr<vc::Page>> pages;
                 {
                     py::gil_scoped_release release;
                     pages = vc::decode_vin_batch(d, in, threads < 1 ? 1 : threads,
                                                  current_year > 0 ? current_year : vin::current_year_utc(), check);
                 }
                 return pages;
             },
             py::arg("schema"), py::arg("array"), py::arg("threads"), py::arg("current_year") = 0,
             "Decodes an Arrow string array (its schema and array capsules, which stay the caller's) on `threads` "
             "workers, GIL released: a list of Pages (record 'vin_batch'), in order.  Called on the main thread, "
             "Python's signal handlers run every 50 ms: one that raises (Ctrl-C) stops the workers and its "
             "exception is raised.  `current_year` as in decode.")
        .def_static("columns", &vc::vin_batch_columns, "The column names of decode_arrow's pages.")
        .def_static("hardware_threads", [] { return static_cast<int>(std::thread::hardware_concurrency()); });
}

}  // namespace vehicledata::bindings
