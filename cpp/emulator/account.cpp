// Login and account usage endpoints.
#include "account.h"

#include <simdjson.h>

#include "api.h"
#include "vehicledata/envelope.h"

namespace vehicledata::emulator {

void login(Api& api, const Call& call, httplib::Response& res) {
    simdjson::dom::parser parser;
    simdjson::padded_string padded(call.body);
    simdjson::dom::element root;
    if (call.body.empty()) throw HttpError(400, envelope::kBadRequest, "Bad Request: the body must be JSON {\"api_token\": ..., \"api_secret\": ...}");
    if (parser.parse(padded).get(root))
        throw HttpError(400, envelope::kBadRequest, "Bad Request: the body is not valid JSON");
    simdjson::dom::object obj;
    if (root.get_object().get(obj))
        throw HttpError(400, envelope::kBadRequest, "Bad Request: the body must be a JSON object");
    std::string_view token, secret;
    if (obj["api_token"].get_string().get(token) || token.empty())
        throw HttpError(400, envelope::kBadRequest, "Bad Request: api_token is required (a non-empty string)");
    if (obj["api_secret"].get_string().get(secret) || secret.empty())
        throw HttpError(400, envelope::kBadRequest, "Bad Request: api_secret is required (a non-empty string)");
    const Account* a = api.auth_.find(token, secret);
    if (!a) throw HttpError(401, envelope::kUnauthorized, "Unauthorized: api_token and api_secret do not match an account");
    res.status = 200;
    res.body = api.auth_.issue(*a);
    res.set_header("Content-Type", "text/plain; charset=UTF-8");
}

void account(Api& api, const Call& call, httplib::Response& res, bool today) {
    if (!call.identity.valid)
        throw HttpError(500, envelope::kUnauthenticated,
                        "Unauthenticated" + (call.identity.problem.empty() ? std::string(": a valid JWT is required")
                                                                           : ": " + call.identity.problem));
    const std::int64_t now = api.clock_.now_seconds();
    std::string out;
    if (today) {
        out = "{\"count\":";
        format::append_int(out, api.usage_.today(call.identity.account_id, now));
        out.push_back('}');
    } else {
        out = "[";
        bool first = true;
        for (const auto& [date, n] : api.usage_.since_last_month(call.identity.account_id, now)) {
            if (!first) out.push_back(',');
            first = false;
            out.append("{\"date\":");
            format::append_json_string(out, date);
            out.append(",\"count\":");
            format::append_int(out, n);
            out.push_back('}');
        }
        out.push_back(']');
    }
    set_json(res, std::move(out));
}

}  // namespace vehicledata::emulator
