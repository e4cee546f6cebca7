// Exposes the wire envelope (vehicledata/envelope.h): the service's exception
// names as constants (vehicledata.errors maps them) and the error body's writer
// and reader.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cctype>
#include <string>

#include "vehicledata/envelope.h"

namespace py = pybind11;
namespace ve = vehicledata::envelope;

namespace vehicledata::bindings {
namespace {

// "UnauthenticatedException" -> "UNAUTHENTICATED", "UriTooLongException" -> "URI_TOO_LONG".
std::string constant_name(std::string_view exception) {
    const std::string_view suffix = "Exception";
    if (exception.size() > suffix.size() && exception.substr(exception.size() - suffix.size()) == suffix)
        exception.remove_suffix(suffix.size());
    std::string out;
    for (std::size_t i = 0; i < exception.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(exception[i]);
        if (i > 0 && std::isupper(c)) out.push_back('_');
        out.push_back(static_cast<char>(std::toupper(c)));
    }
    return out;
}

py::dict error_dict(const ve::ErrorBody& e) {
    py::dict d;
    for (const auto& m : ve::kErrorMembers) {
        const py::str key(m.name.data(), m.name.size());
        if (m.text) d[key] = e.*m.text;
        else d[key] = e.*m.number;
    }
    return d;
}

}  // namespace

void bind_envelope(py::module_& m) {
    py::module_ s = m.def_submodule("envelope", "The service's wire envelope: exception names and error bodies");
    py::list names;
    for (const char* name : ve::exception_names()) {
        s.attr(constant_name(name).c_str()) = name;
        names.append(name);
    }
    s.attr("EXCEPTIONS") = py::tuple(names);
    s.def("exception_for", &ve::exception_for, py::arg("status"),
          "The exception name the service sends with an HTTP error status.");
    s.def("error_json", [](const std::string& exception, std::int64_t code, const std::string& url,
                           const std::string& message) {
        return ve::error_json(ve::ErrorBody{exception, code, url, message});
    }, py::arg("exception"), py::arg("code"), py::arg("url"), py::arg("message"),
          "The service's JSON error body.");
    s.def("read_error", [](const py::bytes& body, const std::string& content_type) {
        return error_dict(ve::read_error(std::string(body), content_type));
    }, py::arg("body"), py::arg("content_type"),
          "An error body (JSON or text) as {exception, code, url, message}; ill-formed UTF-8 becomes U+FFFD.");
    py::list members;
    for (const auto& c : ve::kCollectionMembers) members.append(py::str(c.name.data(), c.name.size()));
    s.attr("COLLECTION_MEMBERS") = py::tuple(members);
}

}  // namespace vehicledata::bindings
