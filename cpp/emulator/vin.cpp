// GET /api/vin/{vin}: validation and decoding by vin::Decoder (vPIC's algorithm over the tables
// loaded once at start-up, see vin_load.cpp), then the catalogue's trims of the decoded
// year/make/model, narrowed and ordered by what the VIN settles.  See docs/emulator.md.
#include <algorithm>

#include "vin.h"

#include "detail.h"
#include "api.h"
#include "vehicledata/envelope.h"
#include "vehicledata/vin_trims.h"

namespace vehicledata::emulator {

void vin_decode(Api& api, const Call& call, httplib::Response& res) {
    const std::string vin = vin::normalize(call.route->arg);
    if (std::string invalid = vin::invalid_message(call.route->arg); !invalid.empty())
        throw HttpError(400, envelope::kBadRequest, invalid);
    const bool verbose = yes_no(call, "verbose");
    const bool all_trims = yes_no(call, "all_trims");
    const vin::Decoder* decoder = api.vin_decoder_->get();
    if (!decoder)
        throw HttpError(501, envelope::kNotImplemented,
                        "VIN decoding needs the vPIC tables, and this database was built without them");
    const vin::Result r = decoder->decode(vin, vin::current_year_utc());
    if (r.status != vin::Result::Status::ok) throw HttpError(404, envelope::kNotFound, vin::not_found_message(vin, r));
    const bool demo = !(call.identity.valid && call.identity.subscribed);
    if (demo && (r.year < schema::kDemoFirstYear || r.year > schema::kDemoLastYear))
        throw HttpError(404, envelope::kNotFound, "Model year " + std::to_string(r.year) +
                                                      " is outside the demo data-set (2015-2020): log in with a subscription");
    if (std::string missing = vin::not_found_message(vin, r); !missing.empty())
        throw HttpError(404, envelope::kNotFound, missing);
    const std::string_view* make = r.get(vin::kMake);
    const std::string_view* model = r.get(vin::kModel);
    const std::string_view* trim = r.get(vin::kTrim);

    // Catalogue trims of the year/make/model (vPIC Make/Model ids -> catalogue ids through the
    // dataset's vpic_makes/vpic_models, the naming module's mapping), best match first.
    std::vector<std::pair<int, std::int64_t>> ranked;  // (score, trim id)
    // The database is read-only and one per process: whether it has the mapping is settled once.
    static const bool has_map = [&] {
        Statement st = api.store_.statement("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vpic_models'");
        return st.step();
    }();
    if (r.model_id > 0 && has_map) {
        const std::uint64_t generation = api.store_.data_generation();
        std::shared_ptr<const VinTrimCache::Trims> trims = api.vin_trims_.get(r.year, r.model_id, r.make_id, generation);
        if (!trims) {
            auto fresh = std::make_shared<VinTrimCache::Trims>();
            Statement st = api.store_.statement(
                std::string("SELECT t.id, ") + vin::kTrimTextSql + " FROM trims t " + vin::kTrimJoinSql +
                " WHERE t.year = ? AND vm.vpic_model_id = ? AND vk.vpic_make_id = ? ORDER BY t.id LIMIT " +
                std::to_string(vin::kMaxTrims));
            st.bind({query::Scalar(static_cast<std::int64_t>(r.year)), query::Scalar(static_cast<std::int64_t>(r.model_id)),
                     query::Scalar(static_cast<std::int64_t>(r.make_id))});
            while (st.step()) {
                const unsigned char* t = sqlite3_column_text(st.get(), 1);
                fresh->emplace_back(sqlite3_column_int64(st.get(), 0), t ? reinterpret_cast<const char*>(t) : "");
            }
            api.vin_trims_.put(r.year, r.model_id, r.make_id, fresh, generation);
            trims = std::move(fresh);
        }
        ranked = vin::rank_trims(r, *trims, all_trims);
    }

    // The make as the catalogue spells it ("Toyota", not vPIC's "TOYOTA"), when the dataset maps it.
    std::string catalogue_make(*make);
    if (r.make_id > 0 && has_map) {
        Statement st = api.store_.statement(
            vin::kCatalogueMakeSql);
        st.bind({query::Scalar(static_cast<std::int64_t>(r.make_id))});
        if (st.step()) {
            const unsigned char* name = sqlite3_column_text(st.get(), 0);
            if (name && *name) catalogue_make = reinterpret_cast<const char*>(name);
        }
    }

    const schema::Record* result = schema::find_record("vin_result");
    std::string out = "{";
    bool first = true;
    for (const auto* f : result->record_fields()) {
        if (!first) out.push_back(',');
        first = false;
        format::append_json_string(out, f->name);
        out.push_back(':');
        if (f->name == "year") {
            format::append_int(out, r.year);
        } else if (f->name == "make") {
            format::append_json_string(out, catalogue_make);
        } else if (f->name == "model") {
            format::append_json_string(out, *model);
        } else if (f->name == "trim") {
            if (trim) format::append_json_string(out, *trim);
            else out.append("null");
        } else if (f->name == "specs") {
            out.push_back('{');
            bool sf = true;
            // Both in ascending element id: one walk.  The keys are snake_case ([a-z0-9_]): no escapes.
            auto v = r.values.begin();
            for (const auto& [id, key] : decoder->output_elements()) {
                if (!sf) out.push_back(',');
                sf = false;
                out.push_back('"');
                out.append(key);
                out.append("\":");
                while (v != r.values.end() && v->first < id) ++v;
                if (v != r.values.end() && v->first == id) format::append_json_string(out, v->second);
                else out.append("null");
            }
            out.push_back('}');
        } else if (f->name == "trims") {
            // Each trim in the legacy shape of /api/trims/{id} (the one renderer, detail.cpp).
            out.push_back('[');
            bool tf = true;
            for (const auto& [s, id] : ranked) {
                const std::size_t mark = out.size();
                if (!tf) out.push_back(',');
                if (write_legacy_trim(api, out, id, demo, verbose)) tf = false;
                else out.resize(mark);
            }
            out.push_back(']');
        } else {
            out.append("null");
        }
    }
    out.push_back('}');
    set_json(res, std::move(out));
}

using vin::trims_key;

std::shared_ptr<const VinTrimCache::Trims> VinTrimCache::get(int year, int model_id, int make_id, std::uint64_t generation) {
    std::uint64_t key = 0;
    if (!trims_key(year, model_id, make_id, key)) return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    if (generation != generation_) return nullptr;
    auto it = lists_.find(key);
    return it == lists_.end() ? nullptr : it->second;
}

void VinTrimCache::put(int year, int model_id, int make_id, std::shared_ptr<const Trims> trims, std::uint64_t generation) {
    std::uint64_t key = 0;
    if (!trims || !trims_key(year, model_id, make_id, key)) return;
    std::size_t size = 64;
    for (const auto& t : *trims) size += 48 + t.second.size();
    std::lock_guard<std::mutex> lock(mutex_);
    if (generation < generation_) return;
    if (generation != generation_ || bytes_ + size > kMaxBytes) {
        generation_ = generation;
        lists_.clear();
        bytes_ = 0;
    }
    if (lists_.emplace(key, std::move(trims)).second) bytes_ += size;
}

}  // namespace vehicledata::emulator
