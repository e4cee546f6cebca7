// The VIN answer's shared rules (vehicledata/vin_trims.h): the 400/404 messages and the trim ranking.
#include <gtest/gtest.h>

#include "vehicledata/vin_trims.h"

namespace vin = vehicledata::vin;

namespace {

vin::Result decoded(std::vector<std::pair<int, std::string_view>> values) {
    vin::Result r;
    r.year = 2020;
    r.wmi = "5TF";
    r.values = std::move(values);  // ascending element id
    return r;
}

}  // namespace

TEST(VinTrims, RankByWhatTheVinSettles) {
    const vin::Result r = decoded({{vin::kCylinders, "6"}, {vin::kDisplacementL, "3.6"},
                                   {vin::kDriveType, "4WD/4-Wheel Drive/4x4"}, {vin::kTrim, "SR5"}});
    const vin::TrimTexts trims = {{1, "limited|limited 2wd 3.5l 6cyl"}, {2, "sr5|sr5 4wd 3.5l 6cyl"},
                                  {3, "sr5|sr5 4x4 3.6l v6"}, {4, "sr5x|sr5x 4wd"}};
    using Ranked = std::vector<std::pair<int, std::int64_t>>;
    EXPECT_EQ(vin::rank_trims(r, trims, false), (Ranked{{3, 2}, {3, 3}}));
    EXPECT_EQ(vin::rank_trims(r, trims, true), (Ranked{{3, 2}, {3, 3}, {1, 1}, {1, 4}}));  // "sr5x" is not the word
    EXPECT_TRUE(vin::rank_trims(r, {}, false).empty());
    // vPIC's trim holds the catalogue's name: "quattro Premium Plus" is the "premium plus" trim.
    const vin::Result audi = decoded({{vin::kTrim, "quattro Premium Plus"}});
    EXPECT_EQ(vin::rank_trims(audi, {{7, "prestige|prestige 4dr sedan awd"}, {8, "premium plus|premium plus 4dr sedan awd"}},
                              false),
              (Ranked{{1, 8}}));
}

TEST(VinTrims, EqualScoresGoToTheLowestTrimId) {
    // Two GT trims tie (vPIC's trim names them, nothing else the VIN settles tells them apart): the
    // lower id is first in whatever order the list comes (the callers read it by id; the rule does
    // not lean on that).
    const vin::Result r = decoded({{vin::kFuelPrimary, "Electric"}, {vin::kTrim, "GT"}});
    using Ranked = std::vector<std::pair<int, std::int64_t>>;
    const vin::TrimTexts by_id = {{46965, "long range|long range 4dr suv"}, {46966, "gt|gt standard 4dr suv"},
                                  {46968, "gt|gt gt 4dr suv awd"}, {46969, "wind|wind 4dr suv awd"}};
    vin::TrimTexts reversed(by_id.rbegin(), by_id.rend());
    vin::TrimTexts mixed = {by_id[2], by_id[0], by_id[3], by_id[1]};
    for (const vin::TrimTexts& list : {by_id, reversed, mixed}) {
        EXPECT_EQ(vin::rank_trims(r, list, false), (Ranked{{1, 46966}, {1, 46968}}));
        EXPECT_EQ(vin::rank_trims(r, list, true), (Ranked{{1, 46966}, {1, 46968}, {0, 46965}, {0, 46969}}));
    }
}

TEST(VinTrims, Messages) {
    EXPECT_EQ(vin::invalid_message(" 1gtg6cen0l1139305 "), "");
    EXPECT_EQ(vin::invalid_message("1GTG6CEN0L113930"), "Invalid VIN '1GTG6CEN0L113930': expected 17 characters, got 16");
    // A huge VIN is echoed cut to kEchoBytes with its length named, never inside a UTF-8 character.
    const std::string huge(1'000'000, 'A');
    EXPECT_EQ(vin::invalid_message(huge), "Invalid VIN '" + std::string(vin::kEchoBytes, 'A') +
                                              "...' (1000000 bytes): expected 17 characters, got 1000000");
    const std::string accents = "A" + [] { std::string s; for (int i = 0; i < 150; ++i) s += "\xc3\xa9"; return s; }();
    const std::string cut = vin::invalid_message(accents);
    EXPECT_EQ(cut.substr(0, 13 + 199), "Invalid VIN '" + accents.substr(0, 199));  // "A" and 99 two-byte characters
    EXPECT_EQ(cut.substr(13 + 199, 9), "...' (301");
    const std::string exact(vin::kEchoBytes, 'B');
    EXPECT_EQ(vin::invalid_message(exact), "Invalid VIN '" + exact + "': expected 17 characters, got 200");
    vin::Result unknown;
    unknown.status = vin::Result::Status::unknown_wmi;
    unknown.wmi = "AAA";
    EXPECT_EQ(vin::not_found_message("AAA00000000000000", unknown),
              "VIN AAA00000000000000: unknown manufacturer code (WMI) 'AAA'");
    vin::Result no_schema;
    no_schema.status = vin::Result::Status::no_schema;
    no_schema.wmi = "1GT";
    no_schema.year = 1995;
    EXPECT_EQ(vin::not_found_message("1GTG6CEN0S1139305", no_schema),
              "VIN 1GTG6CEN0S1139305: no VIN schema of WMI '1GT' covers model year 1995");
    const vin::Result no_model = decoded({{vin::kMake, "GMC"}, {vin::kErrorCode, "8"}});
    EXPECT_EQ(vin::not_found_message("1GTG6CEN0L1139305", no_model),
              "VIN 1GTG6CEN0L1139305: no model decodes for model year 2020 (vPIC error code 8)");
    EXPECT_EQ(vin::not_found_message("1GTG6CEN0L1139305", decoded({{vin::kMake, "GMC"}, {vin::kModel, "Canyon"}})), "");
}
