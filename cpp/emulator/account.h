// Login and account usage endpoints: /api/auth/login, /api/account/requests(-today).
#pragma once

#include <httplib.h>

#include "call.h"

namespace vehicledata::emulator {

class Api;

// POST /api/auth/login: the JWT of the account named by the JSON body, as text/plain.
void login(Api& api, const Call& call, httplib::Response& res);
// The caller's request counts: per day since last month, or (with `today`) today's.
void account(Api& api, const Call& call, httplib::Response& res, bool today);

}  // namespace vehicledata::emulator
