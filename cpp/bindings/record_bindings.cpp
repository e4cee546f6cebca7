// Records as views over a decoded page: vehicledata._core.client.RecordBase.
//
// A view holds the page (through a shared layout: the page, its field names and
// a name -> column index) and its row; reading a field materialises that one
// cell (int, float, bool, str, datetime with its served offset; nested values
// through `convert(record, name, json_text)`, kept once read so a nested
// list is the same object on every read).  Field names shadow methods, as in a
// dict-backed record.  Reading `_data` turns the view into a dict-backed record
// (every field materialised, the page let go); `RecordBase(data, kind)` makes a
// dict-backed one.  `_synthetic` is the tuple of the page's synthetic fields
// (Page.synthetic; kept when the view becomes dict-backed; `RecordBase(data, kind,
// synthetic)` sets it).  vehicledata.pager.Record subclasses this type and adds the
// Python conveniences (repr, to_dict, frame, pickling).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <unordered_map>

#include "vehicledata/client/page.h"

#include "cells.h"

namespace py = pybind11;
namespace vc = vehicledata::client;

namespace vehicledata::bindings {
namespace {

struct Layout {
    std::shared_ptr<const vc::Page> page;
    PyObject* index = nullptr;    // dict: interned field name -> column number
    PyObject* names = nullptr;    // tuple of the field names, in column order
    PyObject* kind = nullptr;     // str: the record name
    PyObject* synthetic = nullptr;  // tuple of str: the page's synthetic fields
    PyObject* convert = nullptr;  // callable(record, name, json_text) for nested columns
    TzCache tz;
    ~Layout() {
        Py_XDECREF(index);
        Py_XDECREF(names);
        Py_XDECREF(kind);
        Py_XDECREF(synthetic);
        Py_XDECREF(convert);
    }
};

struct RecordObject {
    PyObject_HEAD
    Layout* layout;    // view: the page's layout; nullptr when dict-backed
    PyObject* owner;   // the capsule that owns `layout`
    Py_ssize_t row;
    PyObject* data;    // dict-backed: the fields; view: nested values read so far (or NULL)
    PyObject* kind;    // str
    PyObject* synthetic;  // tuple of str (NULL: none)
};

PyTypeObject* record_type = nullptr;

void free_layout(PyObject* capsule) { delete static_cast<Layout*>(PyCapsule_GetPointer(capsule, "vehicledata.layout")); }

// A new reference to the field `name`; NULL without an error when there is no such field.
PyObject* field(RecordObject* self, PyObject* name) {
    if (!self->layout) {
        PyObject* v = PyDict_GetItemWithError(self->data, name);
        Py_XINCREF(v);
        return v;
    }
    Layout& L = *self->layout;
    PyObject* col = PyDict_GetItemWithError(L.index, name);
    if (!col) return nullptr;
    const vc::Column& c = L.page->columns[static_cast<std::size_t>(PyLong_AsSsize_t(col))];
    const std::size_t row = static_cast<std::size_t>(self->row);
    if (c.kind != vc::ColumnKind::Json) return cell(c, row, L.tz);
    if (self->data) {
        PyObject* v = PyDict_GetItemWithError(self->data, name);
        if (v || PyErr_Occurred()) {
            Py_XINCREF(v);
            return v;
        }
    }
    if (!c.valid[row]) Py_RETURN_NONE;
    PyObject* text = cell(c, row, L.tz);
    if (!text) return nullptr;
    PyObject* v = PyObject_CallFunctionObjArgs(L.convert, L.kind, name, text, nullptr);
    Py_DECREF(text);
    if (!v) return nullptr;
    if (!self->data && !(self->data = PyDict_New())) {
        Py_DECREF(v);
        return nullptr;
    }
    if (PyDict_SetItem(self->data, name, v) != 0) {
        Py_DECREF(v);
        return nullptr;
    }
    return v;
}

// View -> dict-backed (every field materialised); 0 or -1 with an error.
int materialise(RecordObject* self) {
    if (!self->layout) return 0;
    PyObject* names = self->layout->names;
    PyObject* d = PyDict_New();
    if (!d) return -1;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(names); ++k) {
        PyObject* name = PyTuple_GET_ITEM(names, k);
        PyObject* v = field(self, name);
        if (!v || PyDict_SetItem(d, name, v) != 0) {
            Py_XDECREF(v);
            Py_DECREF(d);
            return -1;
        }
        Py_DECREF(v);
    }
    Py_XSETREF(self->data, d);
    self->layout = nullptr;
    Py_CLEAR(self->owner);
    return 0;
}

PyObject* rec_getattro(PyObject* o, PyObject* name) {
    auto* self = reinterpret_cast<RecordObject*>(o);
    PyObject* v = field(self, name);
    if (v || PyErr_Occurred()) return v;
    v = PyObject_GenericGetAttr(o, name);
    if (v || !PyErr_ExceptionMatches(PyExc_AttributeError)) return v;
    // Not a field nor a method: the subclass's `_no_field(name)` raises a helpful AttributeError.
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    static PyObject* hook_name = PyUnicode_InternFromString("_no_field");
    PyObject* hook = PyObject_GenericGetAttr(o, hook_name);
    if (!hook) {
        PyErr_Clear();
        PyErr_Restore(type, value, tb);
        return nullptr;
    }
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    v = PyObject_CallOneArg(hook, name);
    Py_DECREF(hook);
    return v;
}

int rec_setattro(PyObject*, PyObject*, PyObject*) {
    PyErr_SetString(PyExc_AttributeError, "records are read-only");
    return -1;
}

PyObject* rec_subscript(PyObject* o, PyObject* key) {
    PyObject* v = PyUnicode_Check(key) ? field(reinterpret_cast<RecordObject*>(o), key) : nullptr;
    if (!v && !PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, key);
    return v;
}

Py_ssize_t rec_length(PyObject* o) {
    auto* self = reinterpret_cast<RecordObject*>(o);
    return self->layout ? PyTuple_GET_SIZE(self->layout->names) : PyDict_Size(self->data);
}

int rec_contains(PyObject* o, PyObject* key) {
    auto* self = reinterpret_cast<RecordObject*>(o);
    if (!PyUnicode_Check(key)) return 0;
    return PyDict_Contains(self->layout ? self->layout->index : self->data, key);
}

PyObject* rec_iter(PyObject* o) {
    auto* self = reinterpret_cast<RecordObject*>(o);
    return PyObject_GetIter(self->layout ? self->layout->names : self->data);
}

PyObject* rec_get_data(PyObject* o, void*) {
    auto* self = reinterpret_cast<RecordObject*>(o);
    if (materialise(self) != 0) return nullptr;
    Py_INCREF(self->data);
    return self->data;
}

PyObject* rec_get_kind(PyObject* o, void*) {
    auto* self = reinterpret_cast<RecordObject*>(o);
    Py_INCREF(self->kind);
    return self->kind;
}

PyObject* rec_get_synthetic(PyObject* o, void*) {
    auto* self = reinterpret_cast<RecordObject*>(o);
    if (!self->synthetic) return PyTuple_New(0);
    Py_INCREF(self->synthetic);
    return self->synthetic;
}

PyObject* rec_get_is_view(PyObject* o, void*) {
    return PyBool_FromLong(reinterpret_cast<RecordObject*>(o)->layout != nullptr);
}

PyObject* rec_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
    static const char* kw[] = {"data", "record", "synthetic", nullptr};
    PyObject* data = nullptr;
    PyObject* kind = nullptr;
    PyObject* synthetic = nullptr;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OUO", const_cast<char**>(kw), &data, &kind, &synthetic))
        return nullptr;
    PyObject* syn = nullptr;  // a tuple of str, or NULL
    if (synthetic && synthetic != Py_None) {
        syn = PySequence_Tuple(synthetic);
        if (!syn) return nullptr;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(syn); ++i) {
            if (!PyUnicode_Check(PyTuple_GET_ITEM(syn, i))) {
                Py_DECREF(syn);
                PyErr_SetString(PyExc_TypeError, "synthetic must be a sequence of str");
                return nullptr;
            }
        }
    }
    PyObject* d = data == nullptr ? PyDict_New() : PyDict_CheckExact(data) ? (Py_INCREF(data), data)
                                                                          : PyDict_New();
    if (!d) {
        Py_XDECREF(syn);
        return nullptr;
    }
    if (data && !PyDict_CheckExact(data) && PyDict_Merge(d, data, 1) != 0) {
        Py_DECREF(d);
        Py_XDECREF(syn);
        return nullptr;
    }
    auto* self = reinterpret_cast<RecordObject*>(type->tp_alloc(type, 0));
    if (!self) {
        Py_DECREF(d);
        Py_XDECREF(syn);
        return nullptr;
    }
    self->data = d;
    self->synthetic = syn;
    self->kind = kind ? kind : PyUnicode_FromString("");
    if (kind) Py_INCREF(kind);
    return reinterpret_cast<PyObject*>(self);
}

void rec_dealloc(PyObject* o) {
    auto* self = reinterpret_cast<RecordObject*>(o);
    Py_XDECREF(self->owner);
    Py_XDECREF(self->data);
    Py_XDECREF(self->kind);
    Py_XDECREF(self->synthetic);
    PyTypeObject* type = Py_TYPE(o);
    type->tp_free(o);
    Py_DECREF(type);  // instances of heap types hold their type
}

PyGetSetDef rec_getset[] = {
    {"_data", rec_get_data, nullptr, "The fields as a dict (a view becomes dict-backed: every field read).", nullptr},
    {"_kind", rec_get_kind, nullptr, "The record name ('' if unknown).", nullptr},
    {"_synthetic", rec_get_synthetic, nullptr, "The page's synthetic fields (X-Emulator-Synthetic), a tuple.", nullptr},
    {"_is_view", rec_get_is_view, nullptr, "True while the record still reads from its page.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyTypeObject* make_record_type() {
    static PyType_Slot slots[] = {
        {Py_tp_doc, const_cast<char*>("A record: a view over one row of a decoded page, or a dict of fields.")},
        {Py_tp_new, reinterpret_cast<void*>(rec_new)},
        {Py_tp_dealloc, reinterpret_cast<void*>(rec_dealloc)},
        {Py_tp_getattro, reinterpret_cast<void*>(rec_getattro)},
        {Py_tp_setattro, reinterpret_cast<void*>(rec_setattro)},
        {Py_tp_iter, reinterpret_cast<void*>(rec_iter)},
        {Py_tp_getset, rec_getset},
        {Py_mp_length, reinterpret_cast<void*>(rec_length)},
        {Py_mp_subscript, reinterpret_cast<void*>(rec_subscript)},
        {Py_sq_contains, reinterpret_cast<void*>(rec_contains)},
        {0, nullptr},
    };
    static PyType_Spec spec = {"vehicledata._core.client.RecordBase", sizeof(RecordObject), 0,
                               Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, slots};
    return reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&spec));
}

// The field names of a page's columns (a tuple of interned str) and their index
// (str -> column number), made once per record and set of columns and kept for
// the life of the process (a few dozen at most: one per record and verbose flag).
struct Names {
    PyObject* names;
    PyObject* index;
};

const Names& names_of(const vc::Page& page) {
    static std::unordered_map<std::string, Names> cache;
    std::string key = page.record;
    for (const auto& c : page.columns) (key += '\0') += c.name;
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
    const std::size_t k = page.columns.size();
    py::dict index;
    py::tuple names(k);
    for (std::size_t i = 0; i < k; ++i) {
        PyObject* name = PyUnicode_FromStringAndSize(page.columns[i].name.data(),
                                                     static_cast<Py_ssize_t>(page.columns[i].name.size()));
        if (!name) throw py::error_already_set();
        PyUnicode_InternInPlace(&name);
        index[py::handle(name)] = py::int_(i);
        PyTuple_SET_ITEM(names.ptr(), static_cast<Py_ssize_t>(i), name);
    }
    return cache.emplace(std::move(key), Names{names.release().ptr(), index.release().ptr()}).first->second;
}

// Records (instances of `cls`, a RecordBase subclass) viewing every row of `page`.
py::list page_records(std::shared_ptr<vc::Page> page, py::type cls, py::object convert) {
    if (!PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls.ptr()), record_type))
        throw py::type_error("cls must be a subclass of RecordBase");
    auto layout = std::make_unique<Layout>();
    layout->page = page;
    const Names& n = names_of(*page);
    layout->index = n.index;
    layout->names = n.names;
    Py_INCREF(layout->index);
    Py_INCREF(layout->names);
    layout->kind = py::str(page->record).release().ptr();
    layout->synthetic = page->synthetic.empty() ? nullptr : py::tuple(py::cast(page->synthetic)).release().ptr();
    layout->convert = convert.release().ptr();
    Layout* L = layout.get();
    py::object owner = py::reinterpret_steal<py::object>(PyCapsule_New(L, "vehicledata.layout", &free_layout));
    if (!owner) throw py::error_already_set();
    layout.release();
    const Py_ssize_t rows = static_cast<Py_ssize_t>(page->rows);
    py::list out(static_cast<std::size_t>(rows));
    auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
    const bool untrack = PyType_IS_GC(type) && type->tp_dictoffset == 0 &&
                         type->tp_basicsize == record_type->tp_basicsize;
    for (Py_ssize_t r = 0; r < rows; ++r) {
        auto* rec = reinterpret_cast<RecordObject*>(type->tp_alloc(type, 0));
        if (!rec) throw py::error_already_set();
        rec->layout = L;
        rec->owner = owner.inc_ref().ptr();
        rec->row = r;
        rec->data = nullptr;
        rec->kind = L->kind;
        Py_INCREF(rec->kind);
        rec->synthetic = L->synthetic;
        Py_XINCREF(rec->synthetic);
        // Not for the cyclic collector: RecordBase has no tp_traverse, so it never looked inside a
        // record (the capsule, str, a tuple of str, later the nested values read); pager.Record,
        // a heap subclass, is tracked only for its type.  Tracked, every record alive (62,595 for
        // every trim) lengthened each full collection, which holds the GIL: 27-33 ms passes
        // beside an asyncio crawl (issue 42).  A subclass adding fields (__dict__, slots) stays tracked.
        if (untrack) PyObject_GC_UnTrack(rec);
        PyList_SET_ITEM(out.ptr(), r, reinterpret_cast<PyObject*>(rec));
    }
    return out;
}

}  // namespace

void bind_records(py::module_& client) {
    record_type = make_record_type();
    if (!record_type) throw py::error_already_set();
    client.attr("RecordBase") = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(record_type));
    client.def("records", &page_records, py::arg("page"), py::arg("cls"), py::arg("convert"),
               "Records of `cls` (a RecordBase subclass) viewing each row of `page`; nested columns read through "
               "convert(record, name, json_text).");
}

}  // namespace vehicledata::bindings
