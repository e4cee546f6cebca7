// libFuzzer target: the page decoder and the error-body parser
// (cpp/client/page_decode.cpp, envelope::read_error).  The first byte picks the
// record and shape; every input decodes or throws DecodeError, nothing else.
#include <cstddef>
#include <cstdint>
#include <string>

#include "vehicledata/client/errors.h"
#include "vehicledata/client/page.h"
#include "vehicledata/envelope.h"
#include "vehicledata/schema.h"

namespace vc = vehicledata::client;
namespace s = vehicledata::schema;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const auto& records = s::records();
    const s::Record& record = records[data[0] % records.size()];
    static const s::Shape shapes[] = {s::Shape::Envelope, s::Shape::Array, s::Shape::Object};
    s::Shape shape = shapes[(data[0] / 16) % 3];
    bool verbose = data[0] & 8;
    std::string body(reinterpret_cast<const char*>(data + 1), size - 1);
    try {
        vc::Page page = vc::decode_page(body, record, shape, "http://fuzz/", verbose);
        (void)page;
    } catch (const vc::DecodeError&) {
    }
    vehicledata::envelope::ErrorBody e =
        vehicledata::envelope::read_error(body, (data[0] & 4) ? "application/json" : "text/plain");
    (void)e;
    return 0;
}
