// VIN decoding as vPIC's spVinDecode / spVinDecode_Core: WMI, model year passes, pattern keys
// matched as SQL Server's `descriptor LIKE replace(Keys, '*', '_') + '%'`, one winner per element
// (Priority = Wmi_VinSchema.YearFrom desc, changed desc, fewest non-'*' key characters, id),
// engine model patterns, make from the model, conversions, error codes 0-5, 14, 400.
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <unordered_map>

#include "vehicledata/vin.h"
#include "vin_decimal.h"

namespace vehicledata::vin {

namespace {

constexpr int kKeyLen = 14;  // descriptor: positions 4-8, '|', 10-17
constexpr std::uint64_t kAny = ~0ull;
constexpr int kSymbols = 39;       // symbol() values
constexpr std::size_t kIndexedGroups = 8;  // schemas with this many key groups get an index

int symbol(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'Z') return 10 + (c - 'A');
    if (c == '|') return 36;
    if (c == '#') return 37;
    return 38;
}
std::uint64_t bit(char c) { return 1ull << symbol(c); }

// The VIN positions whose use the error codes check (code 14, "Unused position(s)").
constexpr int kUnusedChecked[] = {4, 5, 6, 7, 8, 11};

struct Key {
    std::array<std::uint64_t, kKeyLen> mask{};
    // Per kUnusedChecked position, the characters the key constrains it to ('#' as the digits; 0:
    // unconstrained): what the unused-position check ORs over a pass's items.
    std::array<std::uint64_t, 6> checked{};
    std::uint8_t len = 0;          // positions constrained by the key
    bool never = false;            // longer than the descriptor: cannot match
    std::uint8_t nonstar = 0;      // LEN(REPLACE(Keys, '*', ''))
    bool formula = false;          // contains '#'
    std::int8_t hash_first = -1, hash_last = -1;  // raw indexes of the first and last '#'
};

Key compile_key(std::string_view raw) {
    Key k;
    int pos = 0;
    for (std::size_t i = 0; i < raw.size(); ++i) {
        const char c = static_cast<char>(std::toupper(static_cast<unsigned char>(raw[i])));
        if (c != '*') ++k.nonstar;
        if (c == '#') {
            k.formula = true;
            if (k.hash_first < 0) k.hash_first = static_cast<std::int8_t>(i);
            k.hash_last = static_cast<std::int8_t>(i);
        }
        if (c == '%') break;  // LIKE: the rest matches anything
        std::uint64_t m = 0;
        if (c == '*' || c == '_') {
            m = kAny;
        } else if (c == '[') {
            const auto close = raw.find(']', i);
            if (close == std::string_view::npos) { k.never = true; break; }
            std::string_view cls = raw.substr(i + 1, close - i - 1);
            bool negate = !cls.empty() && cls[0] == '^';
            if (negate) cls.remove_prefix(1);
            for (std::size_t j = 0; j < cls.size(); ++j) {
                const char a = static_cast<char>(std::toupper(static_cast<unsigned char>(cls[j])));
                if (j + 2 < cls.size() && cls[j + 1] == '-') {
                    const char b = static_cast<char>(std::toupper(static_cast<unsigned char>(cls[j + 2])));
                    for (char x = a; x <= b && x != 0; ++x) m |= bit(x);
                    j += 2;
                } else {
                    m |= bit(a);
                }
            }
            if (negate) m = ~m & ((1ull << 37) - 1);
            for (std::size_t j = i + 1; j < close; ++j) if (raw[j] != '*') ++k.nonstar;
            ++k.nonstar;  // ']'
            i = close;
        } else {
            m = bit(c);
        }
        if (pos >= kKeyLen) { k.never = true; break; }
        k.mask[pos++] = m;
    }
    k.len = static_cast<std::uint8_t>(pos);
    for (std::size_t c = 0; c < 6; ++c) {
        const int kp = kUnusedChecked[c] - 4;
        if (kp < k.len && k.mask[static_cast<std::size_t>(kp)] != kAny)
            k.checked[c] = k.mask[static_cast<std::size_t>(kp)] == (1ull << 37) ? ((1ull << 10) - 1)
                                                                               : k.mask[static_cast<std::size_t>(kp)];
    }
    return k;
}

// Elements whose every matching pattern is kept (spVinDecode_Core's rank exemption).
bool multi_valued(int e) {
    switch (e) {
        case 114: case 121: case 129: case 150: case 154: case 155: case 169: case 186: return true;
        default: return false;
    }
}

const char* error_name(int code) {
    switch (code) {
        case 0: return "VIN decoded clean. Check Digit (9th position) is correct";
        case 1: return "Check Digit (9th position) does not calculate properly";
        case 2: return "VIN corrected, error in one position";
        case 3: return "VIN corrected, error in one position (assuming Check Digit is correct)";
        case 4: return "VIN corrected, error in one position only (indicated by ! in Suggested VIN), multiple matches found";
        case 5: return "VIN has errors in few positions";
        case 8: return "No detailed data available currently";
        case 14: return "Unable to provide information for all the characters in the VIN";
        case 400: return "Invalid Characters Present";
        default: return "";
    }
}

// fErrorValue: the ErrorCode weights are not in the vPIC lite tables; any error outweighs a
// fuller decode, a missing decode outweighs everything.
int error_value(const std::vector<int>& codes) {
    int w = 0;
    for (int c : codes) w -= c == 8 ? 1000 : c == 0 ? 0 : c == 14 ? 10 : 100;
    return w;
}

constexpr std::uint32_t kNoString = ~0u;

// Appends a non-negative int below 1000 (error codes, VIN positions) as decimal digits.
void append_small(std::string& out, int v) {
    if (v >= 100) out += static_cast<char>('0' + v / 100);
    if (v >= 10) out += static_cast<char>('0' + v / 10 % 10);
    out += static_cast<char>('0' + v % 10);
}

enum Source : std::uint8_t { kPattern, kEngine, kFormula, kWmi, kYear, kModelMake, kConversion, kDecoding };

}  // namespace

struct Decoder::Impl {
    struct Pat {
        std::uint32_t key;
        std::uint32_t value;     // resolved value (lookup name), index in strings
        std::uint32_t attribute; // raw AttributeId, index in strings
        std::uint32_t changed;   // ordinal of ifnull(UpdatedOn, CreatedOn)
        std::uint32_t id;
        std::uint16_t element;
    };
    // The patterns of one key, [begin, end) in Schema::patterns.
    struct KeyGroup { std::uint32_t key, begin, end; };
    struct Schema {
        std::vector<Pat> patterns;  // by key, then id; the elements run_pass skips left out
        std::vector<KeyGroup> groups;
        // Characters each descriptor position's keys allow (all keys, before leaving patterns
        // out): what fExtractValidCharsPerWmiYear collects (the error codes use it only with
        // position checks; the choice between model-year cycles always does).
        std::array<std::uint64_t, kKeyLen> valid_chars{};
        // Descriptor positions (bit i: desc[i]) some key of the schema reads: constrains, or cuts
        // a '#' value from (all keys, before leaving patterns out).
        std::uint16_t reads = 0;
        bool to_be_qced = false;
        // With many groups, which groups' keys allow each symbol at each position: bit g of
        // index[(position * kSymbols + symbol) * words + g / 64] (positions past a key's end allow
        // every symbol); `formula` marks the groups of '#' keys.  The groups a descriptor matches
        // are then the AND over its 14 positions.
        std::uint32_t words = 0;
        std::vector<std::uint64_t> index, formula;
    };
    struct WmiSchema { std::uint32_t schema; int from, to; };
    struct Wmi {
        int vehicle_type = 0, truck_type = 0;
        std::uint32_t vehicle_type_name = 0, manufacturer_name = 0, manufacturer_id = 0;
        std::vector<WmiSchema> schemas;
        std::vector<std::pair<int, std::uint32_t>> makes;  // (make id, upper name)
        std::uint16_t reads = 0;  // Schema::reads of every schema of the WMI, any year
        // The schemas as model years see them, precomputed: the years split into segments
        // [year_start[k], year_start[k + 1]) (the last one open) over which the same schemas are
        // valid; segment k's valid schemas (not to be QC'ed, each with its priority: the latest
        // YearFrom that covers the year) are valid[valid_begin[k], valid_begin[k + 1]), and
        // covered[k] says whether any schema covers its years at all.
        std::vector<int> year_start;
        std::vector<std::uint32_t> valid_begin;
        std::vector<std::pair<std::uint32_t, int>> valid;
        std::vector<bool> covered;
        // The segment of a year, -1 before the first.
        int segment(int year) const {
            return static_cast<int>(std::upper_bound(year_start.begin(), year_start.end(), year) - year_start.begin()) - 1;
        }
    };
    struct EnginePat { std::uint16_t element; std::uint32_t value, attribute, changed; };
    struct Conv { int from, to; Formula f; };

    std::vector<std::string> strings;
    std::unordered_map<std::string, std::uint32_t> string_ids;
    std::vector<Key> keys;
    // The WMIs by code, its bytes packed in a word (codes of 3 and 6 characters: the ones a VIN
    // names): the lookup of a VIN's WMI without building a string.
    std::unordered_map<std::uint64_t, std::uint32_t> wmi_codes;
    static std::uint64_t pack_code(const char* a, std::size_t n, const char* b = nullptr, std::size_t nb = 0) {
        std::uint64_t k = 0;
        std::memcpy(&k, a, n);
        if (nb) std::memcpy(reinterpret_cast<char*>(&k) + n, b, nb);
        return k;
    }
    // The WMI of a well-formed VIN (3 characters, 6 when position 3 is '9'), nullptr if unknown.
    const Wmi* find_wmi(std::string_view vin) const {
        const bool nine = vin.size() >= 14 && vin[2] == '9';
        const auto it = wmi_codes.find(nine ? pack_code(vin.data(), 3, vin.data() + 11, 3) : pack_code(vin.data(), 3));
        return it == wmi_codes.end() ? nullptr : &wmis[it->second];
    }
    std::vector<Wmi> wmis;
    std::vector<Schema> schemas;
    std::unordered_map<std::uint32_t, std::vector<std::pair<int, std::uint32_t>>> model_makes;  // model -> (make id, upper name)
    std::unordered_map<std::uint32_t, std::vector<EnginePat>> engine;  // engine model name id -> patterns
    std::vector<Conv> conversions;
    // Conversion results of the values patterns and engine patterns give: (conversion index << 32
    // | value string) -> result string.  Computed values (formula keys) convert on the fly.
    std::unordered_map<std::uint64_t, std::uint32_t> converted;
    std::array<bool, 256> conversion_source{};  // elements some conversion starts from
    std::array<int, 256> weight{};
    std::array<bool, 256> output{};
    std::vector<std::pair<int, std::string>> output_elements;
    std::size_t pattern_count = 0;
    // The tables carry the restraint-system patterns (element 65): without them (corgi's lite
    // tables keep 27 elements) the positions those patterns cover look unused or wrong, so the
    // per-position checks (codes 2-5, 14) are left out.
    bool position_checks = false;

    std::uint32_t intern(const std::string& s) {
        auto it = string_ids.find(s);
        if (it != string_ids.end()) return it->second;
        strings.push_back(s);
        return string_ids[s] = static_cast<std::uint32_t>(strings.size() - 1);
    }

    struct Item {
        int element;
        int priority;
        std::uint32_t changed;
        int nonstar;
        std::uint32_t id;
        std::string_view value;
        std::int32_t key;     // key index, -1 none
        Source source;
        std::uint32_t attr_id = 0;            // the raw attribute, an index in strings ("": 0)
        std::uint32_t value_id = kNoString;   // `value` as an index in strings, if it is one
    };

    // Whether `a` outranks `b` for the same element (spVinDecode_Core's Priority): priority desc,
    // changed desc, nonstar asc, id asc.  Items equal on all four keep their order of arrival
    // (run_pass offers them in a fixed order: schemas, key groups and patterns by id, engine
    // patterns in table order), so the winners are a function of the VIN and the tables.
    static bool outranks(const Item& a, const Item& b) {
        if (a.priority != b.priority) return a.priority > b.priority;
        if (a.changed != b.changed) return a.changed > b.changed;
        if (a.nonstar != b.nonstar) return a.nonstar < b.nonstar;
        return a.id < b.id;
    }

    struct Pass {
        int year = 0;
        // The winners as run_pass collects them: best[slot[e]] is element e's best item so far
        // (slot -1: none yet); `multi` the items of multi-valued elements (all kept); `present`
        // a bit per element offered.  Reset by run_pass as it gathers the winners.
        std::array<std::int16_t, 256> slot = [] { std::array<std::int16_t, 256> a{}; a.fill(-1); return a; }();
        std::array<std::uint64_t, 4> present{};
        std::vector<Item> best, multi;
        std::vector<Item> gathered;   // scratch: the winners in element order
        // The best engine model pattern item in order of arrival (the first of the highest priority).
        bool has_engine = false;
        int engine_priority = 0;
        std::uint32_t engine_attr = 0, engine_id = 0;
        int engine_nonstar = 0;
        std::int32_t engine_key = -1;
        bool any_pattern = false;  // some pattern key matched (items of the elements left out included)
        // Storage the items' values view (valid until the next decode on this thread): the
        // descriptor ('#' values are cut from it), the model year, the VIN's descriptor element.
        char desc[kKeyLen] = {};
        char year_text[12] = {};
        std::string descriptor;
        const std::pair<std::uint32_t, int>* schemas = nullptr;  // (schema, priority)
        std::size_t n_schemas = 0;
        std::vector<Item> items;
        std::size_t sorted = 0;  // items[0, sorted) are in element order (the winners)
        std::vector<std::pair<const Item*, const Conv*>> todo;  // conversions (scratch)
        std::vector<Item> added;
        // The texts of the decoding items (kept between decodes: their capacity is reused).
        std::string corrected, error_bytes, additional, invalid, code_list, text, unused;
        std::deque<std::string> owned;  // storage of computed values (a deque: views stay valid)
        std::vector<int> codes;
        int model_id = 0, make_id = 0;
        // Positions 4-8 and 11-14 whose character no key of the pass's schemas allows (what
        // spVinDecode_ErrorCode's codes 2-5 count with the full tables).
        int invalid_positions = 0;
    };

    // A decoding thread's scratch: the two model year passes, and decode()'s values the tables do
    // not hold (value index, offset in scratch).
    struct Scratch {
        Pass passes[2];
        std::string scratch;
        std::vector<std::pair<std::size_t, std::size_t>> moved;
    };

    // This thread's Scratch. Not inlined on purpose: in a shared library each use of a
    // thread_local's address is a __tls_get_addr call, and GCC recomputes that address at every
    // use in the function that names it (36 call sites in decode(), about 20 calls per decode)
    // instead of keeping it; a call's result it keeps.
    [[gnu::noinline]] static Scratch& thread_scratch() {
        thread_local Scratch tls;
        return tls;
    }

    std::string_view own(Pass& p, std::string s) const {
        p.owned.push_back(std::move(s));
        return p.owned.back();
    }

    // The schemas valid for `year`, with their priority (the latest YearFrom that covers it), into p.
    void valid_schemas(const Wmi& w, int year, Pass& p) const;
    // One model year pass over the schemas valid_schemas put in p.  `keep`: the elements whose
    // items the pass resolves (nullptr: all); the error codes come out the same either way, except
    // the unused-position check of the full tables (position_checks), which needs every winner.
    void run_pass(std::string_view vin, const Wmi& w, bool conclusive, const ElementSet* keep, Pass& p) const;
    // Its steps, in order (each reads what the ones before put in p; inlined into run_pass, as the
    // one function they were: the same instructions per VIN):
    // Offers every item of the pattern keys the descriptor matches (noting the best engine model);
    // ORs each schema's valid characters into valid_chars.
    [[gnu::always_inline]] void offer_patterns(std::string_view vin, const ElementSet* keep, Pass& p,
                        std::array<std::uint64_t, kKeyLen>& valid_chars) const;
    // Offers the engine model's own patterns (priority 50), the WMI's items and the model year.
    [[gnu::always_inline]] void offer_fixed_items(const Wmi& w, const ElementSet* keep, Pass& p) const;
    // One winner per element (a multi-valued element's items by rank) into p.items, in element order.
    [[gnu::always_inline]] static void gather_winners(Pass& p);
    // Make: from the model (Make_Model), else the WMI's only make.
    [[gnu::always_inline]] void add_make(const Wmi& w, Pass& p) const;
    // Conversions (one level, highest priority source first) of elements not present.
    [[gnu::always_inline]] void add_conversions(const ElementSet* keep, Pass& p) const;
    // The error codes (spVinDecode_ErrorCode and the checks of spVinDecode_Core) and their texts'
    // parts: p.codes, corrected, error_bytes, additional, invalid, invalid_positions.
    [[gnu::always_inline]] void error_codes(std::string_view vin, const Wmi& w, const std::array<std::uint64_t, kKeyLen>& valid_chars,
                     Pass& p) const;
    // The decoding elements: suggested VIN, error code and text, possible values, additional text,
    // descriptor.
    [[gnu::always_inline]] void decoding_items(std::string_view vin, const Wmi& w, bool conclusive, Pass& p) const;
    // The first item of `element` in p.items (nullptr: none).
    static Item* find_item(Pass& p, int element) {
        for (auto& it : p.items)
            if (it.element == element) return &it;
        return nullptr;
    }
    // One item offered to its element: kept when it outranks the element's best so far; every
    // item of a multi-valued element kept (`keep`: the elements resolved; nullptr: all).
    [[gnu::always_inline]] static void offer(Pass& p, const ElementSet* keep, const Item& it) {
        const auto e = static_cast<std::size_t>(it.element);  // 0-255: the constructor keeps no other
        if (keep && !keep->has(it.element)) return;
        p.present[e >> 6] |= 1ull << (e & 63);
        if (multi_valued(it.element)) {
            p.multi.push_back(it);
            return;
        }
        std::int16_t& s = p.slot[e];
        if (s < 0) {
            s = static_cast<std::int16_t>(p.best.size());
            p.best.push_back(it);
        } else if (outranks(it, p.best[static_cast<std::size_t>(s)])) {
            p.best[static_cast<std::size_t>(s)] = it;
        }
    }
    // Decoder::decode; `wanted` nullptr: every element.
    void decode_into(std::string_view vin, int current_year, Result& r, const ElementSet* wanted) const;
};

Decoder::Decoder(Tables t) : impl_(std::make_unique<Impl>()) {
    Impl& m = *impl_;
    m.strings.reserve(1 << 17);
    m.intern("");
    // Elements.
    std::unordered_map<int, std::string> lookup_of;
    for (const auto& e : t.elements) {
        if (e.id < 0 || e.id >= 256) continue;
        m.weight[e.id] = e.weight;
        m.output[e.id] = e.decode && !e.is_private;
        if (m.output[e.id]) m.output_elements.emplace_back(e.id, snake_case(e.name));
        if (!e.lookup_table.empty()) lookup_of[e.id] = e.lookup_table;
    }
    std::sort(m.output_elements.begin(), m.output_elements.end());
    // Lookup names: table -> id -> name.
    std::unordered_map<std::string, std::unordered_map<std::string, std::string>> names;
    for (auto& n : t.names) names[n.table][n.id] = std::move(n.name);
    auto name_of = [&](const std::string& table, const std::string& id) -> const std::string* {
        auto ti = names.find(table);
        if (ti == names.end()) return nullptr;
        auto ni = ti->second.find(id);
        return ni == ti->second.end() ? nullptr : &ni->second;
    };
    auto upper = [](std::string s) {
        for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        return s;
    };
    auto resolved = [&](int element, const std::string& attribute) -> std::uint32_t {
        auto li = lookup_of.find(element);
        if (li != lookup_of.end())
            if (const std::string* n = name_of(li->second, attribute)) return m.intern(*n);
        return m.intern(attribute);
    };
    // Schemas.
    std::unordered_map<int, std::uint32_t> schema_index;
    auto schema_of = [&](int id) {
        auto it = schema_index.find(id);
        if (it != schema_index.end()) return it->second;
        m.schemas.emplace_back();
        return schema_index[id] = static_cast<std::uint32_t>(m.schemas.size() - 1);
    };
    for (int id : t.schemas_to_be_qced) m.schemas[schema_of(id)].to_be_qced = true;
    // Changed-on ordinals.
    std::unordered_map<std::string, std::uint32_t> date_ordinal;
    for (const auto& p : t.patterns) date_ordinal.emplace(p.changed_on, 0);
    for (const auto& p : t.engine_patterns) date_ordinal.emplace(p.changed_on, 0);
    {
        std::vector<const std::string*> dates;
        for (const auto& d : date_ordinal) dates.push_back(&d.first);
        std::sort(dates.begin(), dates.end(), [](const std::string* a, const std::string* b) { return *a < *b; });
        for (std::size_t i = 0; i < dates.size(); ++i) date_ordinal[*dates[i]] = static_cast<std::uint32_t>(i);
    }
    auto ordinal = [&](const std::string& d) { return date_ordinal.at(d); };
    // Keys and patterns.
    std::unordered_map<std::string, std::uint32_t> key_index;
    for (const auto& p : t.patterns) {
        if (p.element_id < 0 || p.element_id >= 256) continue;
        const std::string k = upper(p.keys);
        auto ki = key_index.find(k);
        std::uint32_t key;
        if (ki == key_index.end()) {
            m.keys.push_back(compile_key(k));
            key = key_index[k] = static_cast<std::uint32_t>(m.keys.size() - 1);
        } else {
            key = ki->second;
        }
        m.schemas[schema_of(p.schema_id)].patterns.push_back(
            Impl::Pat{key, resolved(p.element_id, p.attribute), m.intern(p.attribute), ordinal(p.changed_on),
                      static_cast<std::uint32_t>(p.id), static_cast<std::uint16_t>(p.element_id)});
        ++m.pattern_count;
        if (p.element_id == 65) m.position_checks = true;
    }
    for (auto& s : m.schemas) {
        std::sort(s.patterns.begin(), s.patterns.end(), [](const Impl::Pat& a, const Impl::Pat& b) {
            return a.key != b.key ? a.key < b.key : a.id < b.id;
        });
        // The characters every key allows, then only the patterns run_pass can take: not the
        // elements the WMI and model year give, and for plain keys only the output elements.
        std::uint32_t last = ~0u;
        for (const auto& pat : s.patterns) {
            if (pat.key == last) continue;
            last = pat.key;
            const Key& k = m.keys[pat.key];
            if (k.never) continue;
            for (int i = 0; i < k.len; ++i)
                if (k.mask[i] != kAny) {
                    s.valid_chars[i] |= k.mask[i] == (1ull << 37) ? ((1ull << 10) - 1) : k.mask[i];
                    s.reads = static_cast<std::uint16_t>(s.reads | (1u << i));
                }
            if (k.formula && k.hash_first >= 0 && k.hash_last < kKeyLen)
                for (int i = k.hash_first; i <= k.hash_last; ++i) s.reads = static_cast<std::uint16_t>(s.reads | (1u << i));
        }
        std::vector<Impl::Pat> kept;
        kept.reserve(s.patterns.size());
        for (const auto& pat : s.patterns) {
            const int e = pat.element;
            if (e == kMake || e == kManufacturer || e == kModelYear || e == kVehicleType) continue;
            const Key& k = m.keys[pat.key];
            if (k.never || (!k.formula && !m.output[e])) continue;
            if (kept.empty() || kept.back().key != pat.key)
                s.groups.push_back({pat.key, static_cast<std::uint32_t>(kept.size()), 0});
            kept.push_back(pat);
            s.groups.back().end = static_cast<std::uint32_t>(kept.size());
        }
        s.patterns = std::move(kept);
        s.patterns.shrink_to_fit();
        s.groups.shrink_to_fit();
        if (s.groups.size() >= kIndexedGroups) {
            s.words = static_cast<std::uint32_t>((s.groups.size() + 63) / 64);
            s.index.assign(static_cast<std::size_t>(kKeyLen) * kSymbols * s.words, 0);
            s.formula.assign(s.words, 0);
            for (std::size_t g = 0; g < s.groups.size(); ++g) {
                const Key& k = m.keys[s.groups[g].key];
                const std::uint64_t bitg = 1ull << (g % 64);
                if (k.formula) s.formula[g / 64] |= bitg;
                for (int pos = 0; pos < kKeyLen; ++pos)
                    for (int sym = 0; sym < kSymbols; ++sym)
                        if (pos >= k.len || ((k.mask[pos] >> sym) & 1))
                            s.index[(static_cast<std::size_t>(pos) * kSymbols + sym) * s.words + g / 64] |= bitg;
            }
        }
    }
    // WMIs.
    std::unordered_map<int, std::uint32_t> wmi_of;
    for (const auto& w : t.wmis) {
        Impl::Wmi x;
        x.vehicle_type = w.vehicle_type_id;
        x.truck_type = w.truck_type_id;
        const std::string vt = std::to_string(w.vehicle_type_id);
        const std::string* vtn = name_of("VehicleType", vt);
        x.vehicle_type_name = vtn ? m.intern(upper(*vtn)) : 0;
        const std::string mid = std::to_string(w.manufacturer_id);
        const std::string* mn = w.manufacturer_id ? name_of("Manufacturer", mid) : nullptr;
        x.manufacturer_name = mn ? m.intern(upper(*mn)) : 0;
        x.manufacturer_id = w.manufacturer_id ? m.intern(mid) : 0;
        wmi_of[w.id] = static_cast<std::uint32_t>(m.wmis.size());
        const std::string code = upper(w.code);
        if (code.size() == 3 || code.size() == 6)
            m.wmi_codes[Impl::pack_code(code.data(), code.size())] = static_cast<std::uint32_t>(m.wmis.size());
        m.wmis.push_back(std::move(x));
    }
    for (const auto& [wid, make] : t.wmi_makes) {
        auto wi = wmi_of.find(wid);
        if (wi == wmi_of.end()) continue;
        const std::string* n = name_of("Make", std::to_string(make));
        if (n) m.wmis[wi->second].makes.emplace_back(make, m.intern(upper(*n)));
    }
    for (const auto& ws : t.wmi_schemas) {
        auto wi = wmi_of.find(ws.wmi_id);
        if (wi == wmi_of.end()) continue;
        m.wmis[wi->second].schemas.push_back({schema_of(ws.schema_id), ws.year_from, ws.year_to ? ws.year_to : 2999});
    }
    for (auto& w : m.wmis) {
        for (const auto& s : w.schemas) {
            w.reads = static_cast<std::uint16_t>(w.reads | m.schemas[s.schema].reads);
            w.year_start.push_back(s.from);
            w.year_start.push_back(s.to + 1);
        }
        std::sort(w.year_start.begin(), w.year_start.end());
        w.year_start.erase(std::unique(w.year_start.begin(), w.year_start.end()), w.year_start.end());
        for (const int year : w.year_start) {
            // The schemas valid for the year, in the order of the WMI's schema list (at most 64).
            const std::size_t first = w.valid.size();
            bool covered = false;
            w.valid_begin.push_back(static_cast<std::uint32_t>(first));
            for (const auto& s : w.schemas) {
                if (year < s.from || year > s.to) continue;
                covered = true;
                if (m.schemas[s.schema].to_be_qced) continue;
                bool found = false;
                for (std::size_t i = first; i < w.valid.size(); ++i)
                    if (w.valid[i].first == s.schema) { w.valid[i].second = std::max(w.valid[i].second, s.from); found = true; }
                if (!found && w.valid.size() - first < 64) w.valid.emplace_back(s.schema, s.from);
            }
            w.covered.push_back(covered);
        }
        w.valid_begin.push_back(static_cast<std::uint32_t>(w.valid.size()));
        w.valid.shrink_to_fit();
    }
    for (const auto& [make, model] : t.make_models) {
        const std::string* n = name_of("Make", std::to_string(make));
        if (n) m.model_makes[m.intern(std::to_string(model))].emplace_back(make, m.intern(upper(*n)));
    }
    for (const auto& e : t.engine_patterns) {
        if (e.element_id < 0 || e.element_id >= 256) continue;
        m.engine[m.intern(e.engine_model)].push_back({static_cast<std::uint16_t>(e.element_id),
                                                      resolved(e.element_id, e.attribute), m.intern(e.attribute),
                                                      ordinal(e.changed_on)});
    }
    for (const auto& c : t.conversions) m.conversions.push_back({c.from_element, c.to_element, Formula::parse(c.formula)});
    for (std::size_t ci = 0; ci < m.conversions.size(); ++ci) {
        const Impl::Conv& c = m.conversions[ci];
        if (c.from >= 0 && c.from < 256) m.conversion_source[static_cast<std::size_t>(c.from)] = true;
        auto convert = [&](std::uint32_t value) {
            const std::uint64_t key = (static_cast<std::uint64_t>(ci) << 32) | value;
            if (m.converted.count(key)) return;
            const std::uint32_t out = m.intern(c.f.apply(m.strings[value]));
            m.converted.emplace(key, out);
        };
        for (const auto& s : m.schemas)
            for (const auto& pat : s.patterns)
                if (pat.element == c.from) convert(pat.value);
        for (const auto& [model, pats] : m.engine)
            for (const auto& ep : pats)
                if (ep.element == c.from) convert(ep.value);
    }
}

Decoder::~Decoder() = default;

const std::vector<std::pair<int, std::string>>& Decoder::output_elements() const { return impl_->output_elements; }
std::size_t Decoder::pattern_count() const { return impl_->pattern_count; }

const std::string_view* Result::get(int element) const {
    auto it = std::lower_bound(values.begin(), values.end(), element,
                               [](const std::pair<int, std::string_view>& v, int e) { return v.first < e; });
    return it != values.end() && it->first == element ? &it->second : nullptr;
}

void Result::get_many(const int* elements, std::size_t n, const std::string_view** out) const {
    auto it = values.begin();
    for (std::size_t i = 0; i < n; ++i) {
        while (it != values.end() && it->first < elements[i]) ++it;
        out[i] = it != values.end() && it->first == elements[i] ? &it->second : nullptr;
    }
}

void Decoder::Impl::valid_schemas(const Wmi& w, int year, Pass& p) const {
    p.year = year;
    const int k = w.segment(year);
    p.schemas = k < 0 ? nullptr : w.valid.data() + w.valid_begin[static_cast<std::size_t>(k)];
    p.n_schemas = k < 0 ? 0 : w.valid_begin[static_cast<std::size_t>(k) + 1] - w.valid_begin[static_cast<std::size_t>(k)];
}

void Decoder::Impl::run_pass(std::string_view vin, const Wmi& w, bool conclusive, const ElementSet* keep,
                             Pass& p) const {
    // Valid characters per position over every key of the WMI and year (fExtractValidCharsPerWmiYear).
    std::array<std::uint64_t, kKeyLen> valid_chars{};
    offer_patterns(vin, keep, p, valid_chars);
    offer_fixed_items(w, keep, p);
    gather_winners(p);
    add_make(w, p);
    add_conversions(keep, p);
    error_codes(vin, w, valid_chars, p);
    decoding_items(vin, w, conclusive, p);
}

inline void Decoder::Impl::offer_patterns(std::string_view vin, const ElementSet* keep, Pass& p,
                                   std::array<std::uint64_t, kKeyLen>& valid_chars) const {
    char* const desc = p.desc;
    char formula_desc[kKeyLen];
    for (int i = 0; i < 5; ++i) desc[i] = vin[3 + i];
    desc[5] = '|';
    for (int i = 0; i < 8; ++i) desc[6 + i] = vin[9 + i];
    for (int i = 0; i < kKeyLen; ++i) formula_desc[i] = desc[i] >= '0' && desc[i] <= '9' ? '#' : desc[i];

    const auto& valid = p.schemas;
    const std::size_t n_valid = p.n_schemas;
    // The descriptor's characters as symbol bits, plain and with digits as '#'.
    std::array<std::uint64_t, kKeyLen> dbit, fbit;
    std::array<int, kKeyLen> dsym, fsym;
    for (int i = 0; i < kKeyLen; ++i) {
        dsym[i] = symbol(desc[i]);
        fsym[i] = symbol(formula_desc[i]);
        dbit[i] = 1ull << dsym[i];
        fbit[i] = 1ull << fsym[i];
    }
    auto matches = [](const Key& k, const std::array<std::uint64_t, kKeyLen>& bits) {
        for (int i = 0; i < k.len; ++i)
            if (!(k.mask[i] & bits[i])) return false;
        return true;
    };
    // One winner per element (Priority desc, changed desc, shortest key, id; ties: the first
    // offered), every item of a multi-valued element: kept as the items are offered, without
    // keeping or sorting the losers.
    p.best.clear();
    p.multi.clear();
    p.has_engine = false;
    p.any_pattern = false;
    for (std::size_t v = 0; v < n_valid; ++v) {
        const Schema& schema = schemas[valid[v].first];
        for (int i = 0; i < kKeyLen; ++i) valid_chars[i] |= schema.valid_chars[i];
        // Pattern items: the groups whose key matches, in order.
        auto take = [&](const KeyGroup& g) __attribute__((always_inline)) {  // (inlined, as before the split: -5 % of the pass)
            const Key& k = keys[g.key];
            p.any_pattern = true;
            if (!k.formula) {
                const int priority = valid[v].second;
                for (std::uint32_t j = g.begin; j < g.end; ++j) {
                    const Pat& pat = schema.patterns[j];
                    if (pat.element == kEngineModel && (!p.has_engine || priority > p.engine_priority)) {
                        p.has_engine = true;
                        p.engine_priority = priority;
                        p.engine_attr = pat.attribute;
                        p.engine_id = pat.id;
                        p.engine_nonstar = k.nonstar;
                        p.engine_key = static_cast<std::int32_t>(g.key);
                    }
                    if (keep && !keep->has(pat.element)) continue;  // (before building the item)
                    offer(p, keep, {pat.element, priority, pat.changed, k.nonstar, pat.id, strings[pat.value],
                                    static_cast<std::int32_t>(g.key), kPattern, pat.attribute, pat.value});
                }
            } else {
                const int a = k.hash_first, b = k.hash_last;
                const std::string_view val = a >= 0 && b < kKeyLen ? std::string_view(desc + a, b - a + 1) : std::string_view();
                for (std::uint32_t j = g.begin; j < g.end; ++j) {
                    const Pat& pat = schema.patterns[j];
                    if (keep && !keep->has(pat.element)) continue;
                    offer(p, keep, {pat.element, 100, pat.changed, k.nonstar, pat.id, val,
                                    static_cast<std::int32_t>(g.key), kFormula, pat.attribute});
                }
            }
        };
        if (schema.words == 0) {
            for (const KeyGroup& g : schema.groups) {
                const Key& k = keys[g.key];
                if (matches(k, k.formula ? fbit : dbit)) take(g);
            }
            continue;
        }
        const std::uint32_t words = schema.words;
        for (std::uint32_t w = 0; w < words; ++w) {
            std::uint64_t plain = ~0ull, form = ~0ull;
            for (int i = 0; i < kKeyLen; ++i) {
                plain &= schema.index[(static_cast<std::size_t>(i) * kSymbols + dsym[i]) * words + w];
                form &= schema.index[(static_cast<std::size_t>(i) * kSymbols + fsym[i]) * words + w];
            }
            std::uint64_t hits = (plain & ~schema.formula[w]) | (form & schema.formula[w]);
            while (hits) {
                const int b = __builtin_ctzll(hits);
                hits &= hits - 1;
                take(schema.groups[static_cast<std::size_t>(w) * 64 + b]);
            }
        }
    }
}

inline void Decoder::Impl::offer_fixed_items(const Wmi& w, const ElementSet* keep, Pass& p) const {
    // Engine model patterns of the best engine model item (priority 50).
    if (p.has_engine) {
        auto ei = engine.find(p.engine_attr);
        if (ei != engine.end())
            for (const auto& ep : ei->second)
                offer(p, keep, {ep.element, 50, ep.changed, p.engine_nonstar, p.engine_id, strings[ep.value],
                                p.engine_key, kEngine, ep.attribute, ep.value});
    }
    // WMI items and the model year (priority 100).
    if (w.vehicle_type_name) offer(p, keep, {kVehicleType, 100, 0, 0, 0, strings[w.vehicle_type_name], -1, kWmi});
    if (w.manufacturer_name) {
        offer(p, keep, {kManufacturer, 100, 0, 0, 0, strings[w.manufacturer_name], -1, kWmi});
        offer(p, keep, {kManufacturerId, 100, 0, 0, 0, strings[w.manufacturer_id], -1, kWmi});
    }
    {
        char* const end = std::to_chars(p.year_text, p.year_text + sizeof p.year_text, p.year).ptr;
        offer(p, keep, {kModelYear, 100, 0, 0, 0,
                        std::string_view(p.year_text, static_cast<std::size_t>(end - p.year_text)), -1, kYear});
    }
}

inline void Decoder::Impl::gather_winners(Pass& p) {
    // The winners in element order (a multi-valued element's items by rank, ties in order of arrival).
    {
        auto& multi = p.multi;
        for (std::size_t i = 1; i < multi.size(); ++i) {
            if (!(multi[i].element < multi[i - 1].element ||
                  (multi[i].element == multi[i - 1].element && outranks(multi[i], multi[i - 1]))))
                continue;
            const Item x = multi[i];
            std::size_t j = i;
            for (; j > 0 && (x.element < multi[j - 1].element ||
                             (x.element == multi[j - 1].element && outranks(x, multi[j - 1])));
                 --j)
                multi[j] = multi[j - 1];
            multi[j] = x;
        }
        auto& out = p.gathered;
        out.clear();
        std::size_t m = 0;
        for (std::size_t word = 0; word < p.present.size(); ++word) {
            std::uint64_t bits = p.present[word];
            p.present[word] = 0;
            while (bits) {
                const std::size_t e = word * 64 + static_cast<std::size_t>(__builtin_ctzll(bits));
                bits &= bits - 1;
                std::int16_t& s = p.slot[e];
                if (s >= 0) {
                    out.push_back(p.best[static_cast<std::size_t>(s)]);
                    s = -1;
                } else {
                    for (; m < multi.size() && static_cast<std::size_t>(multi[m].element) == e; ++m) out.push_back(multi[m]);
                }
            }
        }
        p.items.swap(out);
        p.sorted = p.items.size();
    }
}

inline void Decoder::Impl::add_make(const Wmi& w, Pass& p) const {
    // Make: from the model (Make_Model), else the WMI's only make.
    if (Item* model = find_item(p, kModel)) {
        p.model_id = std::atoi(strings[model->attr_id].c_str());
        auto mi = model_makes.find(model->attr_id);
        if (mi != model_makes.end() && !mi->second.empty()) {
            p.make_id = mi->second.front().first;
            const Item m = *model;
            p.items.push_back({kMake, 1000, 0, m.nonstar, m.id, strings[mi->second.front().second], m.key, kModelMake});
        }
    } else if (w.makes.size() == 1) {
        p.make_id = w.makes.front().first;
        p.items.push_back({kMake, -100, 0, 0, 0, strings[w.makes.front().second], -1, kWmi});
    }
}

inline void Decoder::Impl::add_conversions(const ElementSet* keep, Pass& p) const {
    // Conversions (one level, highest priority source first).
    {
        auto& todo = p.todo;
        todo.clear();
        // The items conversions start from, and the elements present (one scan of the items).
        std::array<bool, 256> present_elements{};
        std::array<const Item*, 16> sources;
        std::size_t n_sources = 0;
        bool overflow = false;
        for (const auto& it : p.items) {
            if (it.element < 0 || it.element >= 256) continue;
            present_elements[static_cast<std::size_t>(it.element)] = true;
            if (conversion_source[static_cast<std::size_t>(it.element)]) {
                if (n_sources < sources.size()) sources[n_sources++] = &it;
                else overflow = true;
            }
        }
        if (!overflow) {
            for (const auto& c : conversions)
                for (std::size_t i = 0; i < n_sources; ++i)
                    if (sources[i]->element == c.from) todo.emplace_back(sources[i], &c);
        } else {
            for (const auto& c : conversions)
                for (const auto& it : p.items)
                    if (it.element == c.from) todo.emplace_back(&it, &c);
        }
        // Stable insertion sort (a handful of entries; std::stable_sort would allocate).
        for (std::size_t i = 1; i < todo.size(); ++i) {
            const auto x = todo[i];
            std::size_t j = i;
            auto before = [](const Item* a, const Item* b) {
                return a->priority != b->priority ? a->priority > b->priority : a->changed > b->changed;
            };
            for (; j > 0 && before(x.first, todo[j - 1].first); --j) todo[j] = todo[j - 1];
            todo[j] = x;
        }
        auto& added = p.added;
        added.clear();
        for (const auto& [it, c] : todo) {
            if (keep && !keep->has(c->to)) continue;
            bool present = c->to >= 0 && c->to < 256 ? present_elements[static_cast<std::size_t>(c->to)] : false;
            if (c->to < 0 || c->to >= 256) {
                for (const auto& x : p.items) present = present || x.element == c->to;
                for (const auto& x : added) present = present || x.element == c->to;
            }
            if (present) continue;
            std::uint32_t vid = kNoString;
            if (it->value_id != kNoString) {
                const auto ci = static_cast<std::uint64_t>(c - conversions.data());
                auto f = converted.find((ci << 32) | it->value_id);
                if (f != converted.end()) vid = f->second;
            }
            const std::string_view value = vid != kNoString ? std::string_view(strings[vid]) : own(p, c->f.apply(it->value));
            added.push_back({c->to, 100, 0, it->nonstar, it->id, value, it->key, kConversion, 0, vid});
            if (c->to >= 0 && c->to < 256) present_elements[static_cast<std::size_t>(c->to)] = true;
        }
        for (auto& a : added) p.items.push_back(a);
    }

}

inline void Decoder::Impl::error_codes(std::string_view vin, const Wmi& w, const std::array<std::uint64_t, kKeyLen>& valid_chars,
                                Pass& p) const {
    const bool nine = vin[2] == '9';
    // Positions in error against the keys of the pass's schemas, as spVinDecode_ErrorCode counts them.
    p.invalid_positions = 0;
    for (int i = 4, n = nine ? 11 : 14; i <= n; ++i) {
        if (i == 9 || i == 10) continue;
        const std::uint64_t allowed = valid_chars[i - 4];
        if (allowed && !(allowed & bit(vin[i - 1]))) ++p.invalid_positions;
    }

    // ---- error codes (spVinDecode_ErrorCode and the checks of spVinDecode_Core)
    std::vector<int>& codes = p.codes;
    std::string& corrected = p.corrected;
    std::string& error_bytes = p.error_bytes;
    std::string& additional = p.additional;
    corrected.clear();
    error_bytes.clear();
    additional.clear();
    if (!p.any_pattern) {
        codes.push_back(8);
    } else if (position_checks) {
        // Positions 4-14 (4-11 for a 6-character WMI) against the characters the patterns allow.
        const int n = nine ? 11 : 14;
        std::string built;
        std::string replacements, last_replacements;
        int errors = 0, last_pos = 0;
        for (int i = 4; i <= n; ++i) {
            const char c = vin[i - 1];
            char r = c;
            if (i != 9 && i != 10) {
                const std::uint64_t allowed = valid_chars[i - 4];
                if (allowed && !(allowed & bit(c))) {
                    r = '!';
                    std::string x;
                    for (char ch : std::string_view("0123456789ABCDEFGHJKLMNPRSTUVWXYZ"))
                        if (allowed & bit(ch)) x.push_back(ch);
                    std::sort(x.begin(), x.end());
                    replacements += "(" + std::to_string(i) + ":" + x + ")";
                    ++errors;
                    last_pos = i;
                    last_replacements = x;
                }
            }
            built.push_back(r);
        }
        // The VIN with '!' at the positions in error (only built when there are errors).
        auto full = [&] {
            std::string f = nine ? std::string(vin.substr(0, 3)) + built + std::string(vin.substr(11, 3))
                                 : std::string(vin.substr(0, 3)) + built;
            if (f.size() < vin.size()) f += std::string(vin.substr(f.size(), 3));
            return f;
        };
        if (errors == 1) {
            if (last_replacements.size() == 1) {
                std::string v(vin);
                v[last_pos - 1] = last_replacements[0];
                codes.push_back(2);
                corrected = v;
                error_bytes = replacements;
            } else {
                int good = 0;
                std::string fresh, one;
                for (char c : last_replacements) {
                    std::string v(vin);
                    v[last_pos - 1] = c;
                    if (v[8] == check_digit(v)) { ++good; fresh.push_back(c); one = v; }
                }
                if (good == 1) {
                    codes.push_back(3);
                    corrected = one;
                    error_bytes = "(" + std::to_string(last_pos) + ":" + fresh + ")";
                } else {
                    codes.push_back(4);
                    corrected = full();
                    error_bytes = "(" + std::to_string(last_pos) + ":" + last_replacements + ")";
                }
            }
        } else if (errors > 1) {
            codes.push_back(5);
            corrected = full();
            error_bytes = replacements;
        }
        // Unused positions: 4-8 and 11 that no decoding pattern's key constrains to the VIN's character.
        std::string& unused = p.unused;
        unused.clear();
        // A position is used when some item's key constrains it to a set holding the VIN's
        // character ('#' standing for the digits): the OR of those sets, in one walk of the items.
        std::array<std::uint64_t, 6> allowed_by_keys{};
        for (const auto& it : p.items) {
            if (it.key < 0) continue;
            const Key& k = keys[static_cast<std::size_t>(it.key)];
            for (std::size_t c = 0; c < 6; ++c) allowed_by_keys[c] |= k.checked[c];
        }
        for (std::size_t c = 0; c < 6; ++c) {
            const int i = kUnusedChecked[c];
            const bool used = (allowed_by_keys[c] & bit(vin[i - 1])) != 0;
            if (!used) {
                if (!unused.empty()) unused += ',';
                append_small(unused, i);
            }
        }
        if (!unused.empty()) {
            codes.push_back(14);
            additional += "Unused position(s): ";
            additional += unused;
            additional += ';';
        }
    }
    // Characters that must be digits: from position 13 (cars, MPVs, light trucks), 14 (others),
    // 15 (6-character WMIs).
    const bool car_mpv_lt = w.vehicle_type == 2 || w.vehicle_type == 7 || (w.vehicle_type == 3 && w.truck_type == 1);
    const int start = nine ? 15 : car_mpv_lt ? 13 : 14;
    std::string& invalid = p.invalid;
    invalid.clear();
    for (int j = start; j <= 17; ++j) {
        const char c = vin[j - 1];
        if (!(c >= '0' && c <= '9')) {
            if (!invalid.empty()) invalid += ", ";
            append_small(invalid, j);
            invalid += ':';
            invalid += c;
        }
    }
    if (!invalid.empty()) {
        codes.push_back(400);
        if (corrected.empty()) corrected.assign(vin);
        for (int j = start; j <= 17; ++j)
            if (!(vin[j - 1] >= '0' && vin[j - 1] <= '9')) corrected[j - 1] = '!';
    }
    // Check digit (fVINCheckDigit2: '?' when a position breaks its pattern).
    {
        char cd = check_digit(vin);
        if (!invalid.empty()) cd = '?';
        if (vin[8] != cd) codes.push_back(1);
    }
    std::sort(codes.begin(), codes.end());
    bool clean = true;
    for (int c : codes) clean = clean && c == 14;
    if (clean) codes.insert(codes.begin(), 0);
}

inline void Decoder::Impl::decoding_items(std::string_view vin, const Wmi& w, bool conclusive, Pass& p) const {
    const bool nine = vin[2] == '9';
    std::vector<int>& codes = p.codes;
    std::string& corrected = p.corrected;
    std::string& error_bytes = p.error_bytes;
    std::string& additional = p.additional;
    const std::string& invalid = p.invalid;
    auto add_text = [&](std::string_view t) {
        if (!additional.empty()) additional += ' ';
        additional += t;
    };
    if (!invalid.empty()) {
        add_text("Invalid character(s): ");
        additional += invalid;
        additional += ';';
    }
    const Item* bc = find_item(p, kBodyClass);
    static constexpr std::string_view incomplete_bodies[] = {"65", "107", "70", "74", "63", "72", "112", "62",
                                                             "64", "76",  "78", "71", "77", "67", "116", "75"};
    bool incomplete = w.vehicle_type == 10;
    if (bc)
        for (std::string_view id : incomplete_bodies) incomplete = incomplete || strings[bc->attr_id] == id;
    if (incomplete)
        add_text("Incomplete Vehicle Warning - Please be advised that the vehicle may have been altered and may not be "
                 "an accurate representation of the vehicle in its current condition.");
    if (!conclusive)
        add_text("The Model Year decoded for this VIN may be incorrect. If you know the Model year, please enter it and "
                 "decode again to get more accurate information.");
    std::string& code_list = p.code_list;
    std::string& text = p.text;
    code_list.clear();
    text.clear();
    for (int c : codes) {
        if (!code_list.empty()) code_list += ',';
        append_small(code_list, c);
        if (!text.empty()) text += "; ";
        append_small(text, c);
        text += " - ";
        text += error_name(c);
    }
    std::string& descriptor = p.descriptor;
    descriptor.assign(vin.substr(0, nine ? 14 : 11));
    descriptor[8] = '*';
    p.items.push_back({kSuggestedVin, 999, 0, 0, 0, corrected, -1, kDecoding});
    p.items.push_back({kErrorCode, 999, 0, 0, 0, code_list, -1, kDecoding});
    p.items.push_back({kPossibleValues, 999, 0, 0, 0, error_bytes, -1, kDecoding});
    p.items.push_back({kAdditionalErrorText, 999, 0, 0, 0, additional, -1, kDecoding});
    p.items.push_back({kErrorText, 999, 0, 0, 0, text, -1, kDecoding});
    p.items.push_back({kDescriptor, 999, 0, 0, 0, descriptor, -1, kDecoding});
}

void Decoder::answer_key(std::string_view vin, char* out) const {
    const Impl& m = *impl_;
    std::copy(vin.begin(), vin.begin() + 17, out);
    out[8] = vin[8] == check_digit(vin) ? '1' : '0';
    const bool nine = vin[2] == '9';
    const Impl::Wmi* wmi = m.find_wmi(vin);
    if (!wmi) return;
    // Positions 12-17 (descriptor 8-13) that neither the WMI nor a key reads: a digit there only
    // counts as a digit (code 400, checked from position 13 at the earliest, and the check digit,
    // which out[8] already holds).
    const unsigned reads = wmi->reads | (nine ? 0x7u << 8 : 0u);
    for (int i = 8; i < kKeyLen; ++i) {
        char& c = out[i + 3];  // descriptor i >= 6: position i + 4
        if (!((reads >> i) & 1u) && c >= '0' && c <= '9') c = '0';
    }
}

Result Decoder::decode(std::string_view vin, int current_year) const {
    Result r;
    decode(vin, current_year, r);
    return r;
}

void Decoder::decode(std::string_view vin, int current_year, Result& r) const {
    impl_->decode_into(vin, current_year, r, nullptr);
}

void Decoder::decode(std::string_view vin, int current_year, Result& r, const ElementSet& wanted) const {
    impl_->decode_into(vin, current_year, r, &wanted);
}

void Decoder::Impl::decode_into(std::string_view vin, int current_year, Result& r, const ElementSet* wanted) const {
    const Impl& m = *this;
    r.status = Result::Status::ok;
    r.year = r.make_id = r.model_id = 0;
    r.values.clear();
    r.wmi.assign(vin.substr(0, 3));
    if (vin.size() >= 14 && vin[2] == '9') r.wmi += vin.substr(11, 3);
    const Impl::Wmi* const found = r.wmi.size() == 3 || r.wmi.size() == 6 ? m.find_wmi(vin) : nullptr;
    if (!found) {
        r.status = Result::Status::unknown_wmi;
        return;
    }
    const Impl::Wmi& w = *found;
    // fVinModelYear2: position 10 in the 2010 cycle; cars, MPVs and light trucks with a digit in
    // position 7 are a cycle earlier; past current year + 2 is a cycle earlier; otherwise the year
    // is not conclusive and both cycles are decoded.
    int year = year_of_code(vin[9]);
    bool conclusive = false;
    const bool car_mpv_lt = w.vehicle_type == 2 || w.vehicle_type == 7 || (w.vehicle_type == 3 && w.truck_type == 1);
    if (car_mpv_lt) {
        conclusive = true;
        if (vin[6] >= '0' && vin[6] <= '9') year -= 30;
    }
    if (year > current_year + 2) {
        year -= 30;
        conclusive = true;
    }
    // The elements the passes resolve: the wanted ones and those the decode reads to answer them
    // (the model for the make, the body class for the error text, the sources of conversions).
    // The full tables' unused-position check reads every winner: there, all elements.
    ElementSet keep_set;
    const ElementSet* keep = nullptr;
    if (wanted && !m.position_checks) {
        keep_set = *wanted;
        for (const int e : {static_cast<int>(kModel), static_cast<int>(kBodyClass)})
            keep_set.bits[static_cast<std::size_t>(e) >> 6] |= 1ull << (e & 63);
        for (bool grew = true; grew;) {  // to a fixed point: a source may be another conversion's target
            grew = false;
            for (const auto& c : m.conversions)
                if (keep_set.has(c.to) && c.from >= 0 && c.from < 256 && !keep_set.has(c.from)) {
                    keep_set.bits[static_cast<std::size_t>(c.from) >> 6] |= 1ull << (c.from & 63);
                    grew = true;
                }
        }
        keep = &keep_set;
    }
    Impl::Scratch& t = Impl::thread_scratch();
    Impl::Pass* const passes = t.passes;
    int n = 1;
    auto reset = [&](Impl::Pass& q) {
        q.items.clear();
        q.owned.clear();
        q.codes.clear();
        q.make_id = q.model_id = 0;
    };
    reset(passes[0]);
    reset(passes[1]);
    m.valid_schemas(w, year, passes[0]);
    if (!conclusive) {
        // The earlier cycle's pass can only win with schemas of its own: with none, it has no
        // pattern (error code 8, which outweighs any of the first pass's codes, or ties it when
        // the first has none either); with the same schemas, every item but the model year is the
        // same and the score's last term, the year, is higher in the first pass.
        Impl::Pass& q = passes[1];
        m.valid_schemas(w, year - 30, q);
        const bool same = q.n_schemas == passes[0].n_schemas &&
                          std::equal(q.schemas, q.schemas + q.n_schemas, passes[0].schemas);
        if (q.n_schemas != 0 && !same) n = 2;
    }
    // Choosing between two passes weighs every element: then both in full.
    if (n == 2) keep = nullptr;
    m.run_pass(vin, w, conclusive, keep, passes[0]);
    if (n == 2) m.run_pass(vin, w, conclusive, nullptr, passes[1]);
    // Best pass: error value, elements weight, patterns, model year. Without the position checks
    // (the lite tables) a pass whose schemas' keys refuse characters of the VIN counts as one with
    // vPIC's codes 2-5 would (an error, -100): with the full tables the later cycle's pass also
    // outweighs the earlier by its safety and restraint elements, which the lite tables leave out,
    // so the weight alone would let a 1993 engine decode beat a 2023 F-150's model, body and trim.
    auto score = [&](const Impl::Pass& p) {
        int weight = 0, patterns = 0;
        int last = -1;
        for (const auto& it : p.items) {
            if (it.value.empty()) continue;
            if (it.element != last) weight += m.weight[it.element];
            last = it.element;
            if ((it.source == kPattern || it.source == kEngine) && it.value != "Not Applicable") ++patterns;
        }
        const int position_errors = !m.position_checks && p.invalid_positions > 0 ? -100 : 0;
        return std::array<int, 4>{error_value(p.codes) + position_errors, weight, patterns, p.year};
    };
    int best = 0;
    if (n == 2 && score(passes[1]) > score(passes[0])) best = 1;
    Impl::Pass& p = passes[best];
    // A schema must cover the year for any pattern to decode.
    const int segment = w.segment(p.year);
    const bool has_schema = segment >= 0 && w.covered[static_cast<std::size_t>(segment)];
    r.year = p.year;
    if (!has_schema) {
        r.status = Result::Status::no_schema;
        return;
    }
    r.make_id = p.make_id;
    r.model_id = p.model_id;
    // The items by element, stably (as std::stable_sort, which would allocate a buffer): the
    // first p.sorted are in order already, the few run_pass appends after them are sorted by
    // insertion and merged in.
    auto before = [](const Impl::Item& a, const Impl::Item& b) {
        return a.element != b.element ? a.element < b.element : a.priority > b.priority;
    };
    auto& items = p.items;
    const std::size_t head = p.sorted;
    for (std::size_t i = head + 1; i < items.size(); ++i) {
        if (!before(items[i], items[i - 1])) continue;
        Impl::Item x = items[i];
        std::size_t j = i;
        for (; j > head && before(x, items[j - 1]); --j) items[j] = items[j - 1];
        items[j] = x;
    }
    {
        std::array<bool, 256> seen{};
        std::size_t n = 0;
        for (const auto& it : items)
            if (it.element >= 0 && it.element < 256 && m.output[it.element] && !seen[it.element]) {
                seen[it.element] = true;
                ++n;
            }
        // At least 32 (an answer has 24 values on average, 31 at most over vins.tsv): one size
        // class, so the allocator's per-thread cache hands back the previous answer's block
        // instead of searching its bins (1k instructions a decode measured with callgrind).
        r.values.reserve(std::max<std::size_t>(n, 32));
    }
    // Values the tables hold are viewed where they are; the others are gathered in `scratch`
    // (per thread) and copied into the Result's buffer at the end: `moved` lists (value index,
    // offset in scratch) of those.
    std::string& scratch = t.scratch;
    std::vector<std::pair<std::size_t, std::size_t>>& moved = t.moved;
    scratch.clear();
    moved.clear();
    auto in_tables = [&](const Impl::Item& it) {
        return it.value.empty() || it.source == kPattern || it.source == kEngine || it.source == kWmi ||
               it.source == kModelMake || (it.source == kConversion && it.value_id != kNoString);
    };
    auto emit = [&](const Impl::Item& it) {
        if (it.element < 0 || it.element >= 256 || !m.output[it.element]) return;
        if (wanted && !wanted->has(it.element)) return;
        if (!r.values.empty() && r.values.back().first == it.element) {
            // A multi-valued element: the values joined with "; ", in scratch.
            if (it.value.empty()) return;
            if (moved.empty() || moved.back().first != r.values.size() - 1) {
                moved.emplace_back(r.values.size() - 1, scratch.size());
                scratch += r.values.back().second;
            }
            scratch += "; ";
            scratch += it.value;
            return;
        }
        if (in_tables(it)) {
            r.values.emplace_back(it.element, it.value);
            return;
        }
        moved.emplace_back(r.values.size(), scratch.size());
        scratch += it.value;
        r.values.emplace_back(it.element, std::string_view());
    };
    for (std::size_t i = 0, j = head; i < head || j < items.size();) {
        if (j == items.size() || (i < head && !before(items[j], items[i]))) emit(items[i++]);
        else emit(items[j++]);
    }
    if (!moved.empty()) {
        if (!r.buffer || r.buffer_capacity < scratch.size()) {
            r.buffer.reset(new char[scratch.size()]);
            r.buffer_capacity = scratch.size();
        }
        std::copy(scratch.begin(), scratch.end(), r.buffer.get());
        for (std::size_t k = 0; k < moved.size(); ++k) {
            const std::size_t end = k + 1 < moved.size() ? moved[k + 1].second : scratch.size();
            r.values[moved[k].first].second = std::string_view(r.buffer.get() + moved[k].second, end - moved[k].second);
        }
    }
}

}  // namespace vehicledata::vin
