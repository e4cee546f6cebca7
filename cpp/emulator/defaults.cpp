// The --print-defaults document (see defaults.h).
#include "defaults.h"

#include <cstdint>

#include "auth.h"
#include "options.h"
#include "vehicledata/format.h"

namespace vehicledata::emulator {

std::string defaults_json() {
    const Options o;
    std::string out = "{\"options\":{\"host\":";
    format::append_json_string(out, o.host);
    auto number = [&](const char* name, std::int64_t v) {
        out.append(",\"").append(name).append("\":");
        format::append_int(out, v);
    };
    number("port", o.port);
    number("rate_limit", o.rate_limit);
    number("login_rate_limit", o.login_rate_limit);
    number("window_seconds", o.window_seconds);
    number("token_ttl", o.token_ttl);
    number("threads", o.threads);
    number("compute_workers", o.compute_workers);
    number("max_connections", o.max_connections);
    number("max_headers", o.max_headers);
    number("max_header_bytes", o.max_header_bytes);
    number("request_timeout", o.request_timeout);
    number("idle_timeout", o.idle_timeout);
    number("write_timeout", o.write_timeout);
    number("max_per_address", o.max_per_address);
    number("response_cache_mb", o.response_cache_mb);
    out.append("},\"accounts\":{");
    bool first = true;
    for (const Account& a : default_accounts()) {
        if (!first) out.push_back(',');
        first = false;
        format::append_json_string(out, a.name);
        out.append(":{\"api_token\":");
        format::append_json_string(out, a.api_token);
        out.append(",\"api_secret\":");
        format::append_json_string(out, a.api_secret);
        out.append(",\"subscribed\":").append(a.subscribed ? "true" : "false");
        out.append(",\"data_feed\":").append(a.data_feed ? "true" : "false");
        out.append(",\"rate_limit_type\":");
        format::append_json_string(out, a.rate_limit_type);
        out.push_back('}');
    }
    out.append("}}");
    return out;
}

}  // namespace vehicledata::emulator
