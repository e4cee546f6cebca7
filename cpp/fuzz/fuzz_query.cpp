// libFuzzer target: the condition parser and encoder (cpp/core/query.cpp).
// Any input either parses (then normalize/encode/to_sql hold, and encode is
// a fixed point: encode(parse(encode(c))) == encode(c)) or throws QueryError.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "vehicledata/query.h"
#include "vehicledata/schema.h"

namespace q = vehicledata::query;
namespace s = vehicledata::schema;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    std::vector<q::Condition> conditions;
    try {
        conditions = q::parse(text);
    } catch (const q::QueryError&) {
        return 0;
    }
    std::string once = q::encode(conditions);
    if (q::encode(q::parse(once)) != once) std::abort();  // the encoder's round trip
    const s::Endpoint* ep = s::find_endpoint("/api/trims/v2");
    if (!ep) std::abort();
    try {
        auto normal = q::normalize(conditions, *ep);
        (void)q::to_sql(normal, *ep, size % 2 == 0);
    } catch (const q::QueryError&) {
    }
    return 0;
}
