// The readers of a call's parameters and access (call.h).
#include "call.h"
#include "vehicledata/envelope.h"

namespace vehicledata::emulator {

const format::QueryParam* param(const Call& call, std::string_view name) {
    for (const auto& p : call.params)
        if (p.name == name) return p.value.empty() ? nullptr : &p;
    return nullptr;
}

bool yes_no(const Call& call, std::string_view name) {
    const auto* p = param(call, name);
    if (!p) return false;
    if (p->value == "yes") return true;
    if (p->value == "no") return false;
    throw bad_request("Invalid " + std::string(name) + " '" + p->value + "': expected yes or no");
}

bool full_access(const Call& call) { return call.identity.valid && call.identity.subscribed; }

HttpError bad_request(const std::string& message) { return HttpError(400, envelope::kBadRequest, message); }

}  // namespace vehicledata::emulator
