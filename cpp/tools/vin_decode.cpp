// vehicledata-vin-decode: decodes VINs read from stdin (one a line) with the emulator's decoder,
// in process, and prints one JSON object a line: {"vin", "year", "make", "model", "series",
// "trim", "body_class", "error_code", "us"} ("us": microseconds of that decode; null fields
// when undecoded, "status" for unknown WMI / no schema / invalid).  Used by
// benchmarks/vin_decode.py for timing and the agreement with other decoders.
// With --all, every decoded element instead ({"vin", "status", "year", "make_id", "model_id",
// "values": [[id, value], ...]}, no timing) and --year Y as the current year: the full answers,
// to compare two builds of the decoder (tools/vin_compare.py).
//   vehicledata-vin-decode --db PATH/vehicledata.db [--all] [--year Y] < vins.txt
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <string>

#include "store.h"
#include "vin_load.h"
#include "vehicledata/format.h"

using namespace vehicledata;

int main(int argc, char** argv) {
    std::string db;
    bool all = false;
    int fixed_year = 0;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--all") all = true;
        else if (a == "--db" && i + 1 < argc) db = argv[++i];
        else if (a == "--year" && i + 1 < argc) fixed_year = std::atoi(argv[++i]);
    }
    if (db.empty()) {
        std::cerr << "usage: vehicledata-vin-decode --db PATH < vins.txt\n";
        return 2;
    }
    try {
        emulator::Store store(db);
        const auto t0 = std::chrono::steady_clock::now();
        auto decoder = emulator::load_vin_decoder(store);
        const auto t1 = std::chrono::steady_clock::now();
        if (!decoder) {
            std::cerr << db << ": no vPIC tables\n";
            return 1;
        }
        std::cerr << "loaded " << decoder->pattern_count() << " patterns in "
                  << std::chrono::duration<double>(t1 - t0).count() << " s\n";
        const std::time_t now = std::time(nullptr);
        std::tm tm{};
        gmtime_r(&now, &tm);
        const int year = fixed_year ? fixed_year : tm.tm_year + 1900;
        std::string line, out;
        while (std::getline(std::cin, line)) {
            const std::string vin = vin::normalize(line);
            if (vin.empty()) continue;
            out = "{\"vin\":";
            format::append_json_string(out, vin);
            if (std::string problem = vin::validation_error(vin); !problem.empty()) {
                out += ",\"status\":\"invalid\"}\n";
                std::cout << out;
                continue;
            }
            const auto a = std::chrono::steady_clock::now();
            const vin::Result r = decoder->decode(vin, year);
            const auto b = std::chrono::steady_clock::now();
            out += ",\"status\":";
            out += r.status == vin::Result::Status::ok ? "\"ok\"" : r.status == vin::Result::Status::unknown_wmi ? "\"unknown_wmi\"" : "\"no_schema\"";
            out += ",\"year\":" + std::to_string(r.year);
            if (all) {
                out += ",\"wmi\":";
                format::append_json_string(out, r.wmi);
                out += ",\"make_id\":" + std::to_string(r.make_id) + ",\"model_id\":" + std::to_string(r.model_id) +
                       ",\"values\":[";
                for (std::size_t i = 0; i < r.values.size(); ++i) {
                    out += (i ? ",[" : "[") + std::to_string(r.values[i].first) + ",";
                    format::append_json_string(out, r.values[i].second);
                    out += "]";
                }
                out += "]}\n";
                std::cout << out;
                continue;
            }
            for (auto [name, e] : {std::pair<const char*, int>{"make", vin::kMake}, {"model", vin::kModel}, {"series", vin::kSeries},
                                   {"trim", vin::kTrim}, {"body_class", vin::kBodyClass}, {"error_code", vin::kErrorCode}}) {
                out += ",\"";
                out += name;
                out += "\":";
                if (const std::string_view* v = r.get(e)) format::append_json_string(out, *v);
                else out += "null";
            }
            out += ",\"us\":" + std::to_string(std::chrono::duration<double, std::micro>(b - a).count()) + "}\n";
            std::cout << out;
        }
    } catch (const std::exception& e) {
        std::cerr << e.what() << "\n";
        return 1;
    }
    return 0;
}
