// Arrow PyCapsule interface of decoded pages: the structs are filled in C++
// (vehicledata/client/arrow_export.h); this file only wraps them in capsules
// named as the Arrow PyCapsule Interface says ("arrow_schema", "arrow_array",
// "arrow_array_stream").  A capsule's destructor releases a struct the
// consumer did not take (a taken struct has release == NULL).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "vehicledata/client/arrow_export.h"
#include "vehicledata/client/page.h"

namespace py = pybind11;
namespace vc = vehicledata::client;

namespace vehicledata::bindings {
namespace {

template <class T>
void free_capsule(PyObject* capsule, const char* name) {
    auto* s = static_cast<T*>(PyCapsule_GetPointer(capsule, name));
    if (!s) {
        PyErr_WriteUnraisable(capsule);
        return;
    }
    if (s->release) s->release(s);
    delete s;
}

void free_schema(PyObject* c) { free_capsule<ArrowSchema>(c, "arrow_schema"); }
void free_array(PyObject* c) { free_capsule<ArrowArray>(c, "arrow_array"); }
void free_stream(PyObject* c) { free_capsule<ArrowArrayStream>(c, "arrow_array_stream"); }

template <class T>
py::object capsule(std::unique_ptr<T> s, const char* name, PyCapsule_Destructor free) {
    PyObject* c = PyCapsule_New(s.get(), name, free);
    if (!c) {
        if (s->release) s->release(s.get());
        throw py::error_already_set();
    }
    s.release();
    return py::reinterpret_steal<py::object>(c);
}

py::object schema_capsule(const vc::Page& page) {
    auto s = std::make_unique<ArrowSchema>();
    vc::export_schema(page, s.get());
    return capsule(std::move(s), "arrow_schema", &free_schema);
}

py::object array_capsule(std::shared_ptr<const vc::Page> page) {
    auto a = std::make_unique<ArrowArray>();
    try {
        vc::export_array(std::move(page), a.get());
    } catch (const std::invalid_argument& e) {
        throw py::value_error(e.what());
    }
    return capsule(std::move(a), "arrow_array", &free_array);
}

// The page's text columns as a struct array capsule and the address of its
// ArrowArray (frames._FastFrames imports it with a schema kept per layout:
// pa.RecordBatch._import_from_c(address, schema); the capsule owns the struct
// until then and frees it after).
py::tuple text_array(std::shared_ptr<const vc::Page> page) {
    auto a = std::make_unique<ArrowArray>();
    try {
        vc::export_text_array(std::move(page), a.get());
    } catch (const std::invalid_argument& e) {
        throw py::value_error(e.what());
    }
    const auto address = reinterpret_cast<std::uintptr_t>(a.get());
    py::object c = capsule(std::move(a), "arrow_array", &free_array);
    return py::make_tuple(std::move(c), address);
}

py::object stream_capsule(std::shared_ptr<const vc::Page> schema_page, vc::PageSource next) {
    auto st = std::make_unique<ArrowArrayStream>();
    vc::export_stream(std::move(schema_page), std::move(next), st.get());
    return capsule(std::move(st), "arrow_array_stream", &free_stream);
}

// The next page of a Python iterator of Pages (the GIL taken for the call; a
// Python error becomes the stream's error message).
vc::PageSource python_source(py::object iterable) {
    auto it = std::shared_ptr<py::object>(new py::object(py::iter(iterable)), [](py::object* o) {
        py::gil_scoped_acquire g;
        delete o;
    });
    return [it]() -> std::shared_ptr<const vc::Page> {
        py::gil_scoped_acquire g;
        PyObject* item = PyIter_Next(it->ptr());
        if (!item) {
            if (PyErr_Occurred()) {
                py::error_already_set e;
                throw std::runtime_error(e.what());
            }
            return nullptr;
        }
        py::object page = py::reinterpret_steal<py::object>(item);
        return page.cast<std::shared_ptr<vc::Page>>();
    };
}

}  // namespace

void bind_page_arrow(py::module_& client) {
    py::object page_class = client.attr("Page");
    py::class_<vc::Page, std::shared_ptr<vc::Page>> cls = py::reinterpret_borrow<py::class_<vc::Page, std::shared_ptr<vc::Page>>>(page_class);
    cls.def("__arrow_c_schema__", [](const vc::Page& p) { return schema_capsule(p); },
            "The Arrow schema of the page's columns (a PyCapsule of the Arrow C Data Interface).")
        .def("__arrow_c_array__", [](std::shared_ptr<vc::Page> p, py::object /*requested_schema*/) {
            return py::make_tuple(schema_capsule(*p), array_capsule(p));
        }, py::arg("requested_schema") = py::none(),
           "The page as one Arrow record batch (schema and struct array capsules): pa.record_batch(page). "
           "Values, offsets and text are not copied; the page must not be concatenated while the batch lives.")
        .def("__arrow_c_stream__", [](std::shared_ptr<vc::Page> p, py::object /*requested_schema*/) {
            auto done = std::make_shared<bool>(false);
            std::shared_ptr<const vc::Page> page = p;
            return stream_capsule(page, [page, done]() -> std::shared_ptr<const vc::Page> {
                if (*done) return nullptr;
                *done = true;
                return page;
            });
        }, py::arg("requested_schema") = py::none(), "The page as an Arrow stream of one batch: pa.table(page).")
        .def("_arrow_text_schema", [](const vc::Page& p) {
            auto s = std::make_unique<ArrowSchema>();
            vc::export_text_schema(p, s.get());
            return capsule(std::move(s), "arrow_schema", &free_schema);
        }, "The Arrow schema of the page's text columns (string, nested, date) only: frames._FastFrames.")
        .def("_arrow_text_array", [](std::shared_ptr<vc::Page> p) { return text_array(p); },
             "(capsule, address) of the page's text columns as one struct array: frames._FastFrames.");

    client.def("arrow_stream", [](std::shared_ptr<vc::Page> schema_page, py::object pages) {
        return stream_capsule(schema_page, python_source(pages));
    }, py::arg("schema_page"), py::arg("pages"),
       "An Arrow stream capsule (arrow_array_stream) with the columns of `schema_page`, one batch per Page of "
       "the iterable `pages` (pulled as the consumer reads; an error in the iterable ends the stream with its "
       "message).");
}

}  // namespace vehicledata::bindings
