// The route table (as moto's urls): every endpoint of the schema table at its path, with its
// kind, method and error style; paths with a parameter ({id}, {code}, {vin}) match by prefix.
#include "routes.h"

#include <algorithm>
#include <unordered_map>

namespace vehicledata::emulator {

namespace {

struct Table {
    std::unordered_map<std::string, Route> exact;
    struct Prefixed {
        std::string prefix;  // the path up to its parameter: "/api/trims/v2/"
        Route route;
    };
    std::vector<Prefixed> prefixed;  // longest prefix first
};

Table build_table() {
    Table t;
    for (const auto& e : schema::endpoints()) {
        Route r;
        r.kind = e.kind;
        r.endpoint = &e;
        r.method = e.method.c_str();
        r.text_errors = e.text_errors;
        const auto open = e.path.find('{');
        if (open == std::string::npos) t.exact[e.path] = r;
        else t.prefixed.push_back({e.path.substr(0, open), r});
    }
    std::stable_sort(t.prefixed.begin(), t.prefixed.end(),
                     [](const auto& a, const auto& b) { return a.prefix.size() > b.prefix.size(); });
    return t;
}

}  // namespace

std::optional<Route> match_route(std::string_view path) {
    static const Table table = build_table();
    // CakePHP compiles every route to `#^<template>[/]*$#`: any number of trailing slashes.
    while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
    if (auto it = table.exact.find(std::string(path)); it != table.exact.end()) return it->second;
    for (const auto& p : table.prefixed) {
        if (path.size() <= p.prefix.size() || path.substr(0, p.prefix.size()) != p.prefix) continue;
        std::string_view arg = path.substr(p.prefix.size());
        if (arg.find('/') != std::string_view::npos) return std::nullopt;
        Route r = p.route;
        r.arg = std::string(arg);
        return r;
    }
    return std::nullopt;
}

std::vector<format::QueryParam> dedupe_params(std::vector<format::QueryParam> params) {
    std::vector<format::QueryParam> out;
    out.reserve(params.size());
    for (auto& p : params) {
        bool found = false;
        for (auto& o : out)
            if (o.name == p.name) {
                o.value = std::move(p.value);
                found = true;
                break;
            }
        if (!found) out.push_back(std::move(p));
    }
    return out;
}

}  // namespace vehicledata::emulator
