// Paging consistency, as checked while a crawl's pages arrive.
#include <gtest/gtest.h>

#include <string>

#include "vehicledata/client/errors.h"
#include "vehicledata/client/paging.h"

namespace vc = vehicledata::client;

namespace {

// Page `number` of 3 pages of 2 records (5 in all) whose next link points at `next` (0: none).
vc::Page page(std::int64_t number, std::int64_t next, std::size_t rows = 2, std::int64_t pages = 3,
              std::int64_t total = 5) {
    vc::Page p;
    p.url = "http://h/api/makes/v2?limit=2" + (number > 1 ? "&page=" + std::to_string(number) : std::string());
    p.rows = rows;
    p.collection.present = true;
    p.collection.count = static_cast<std::int64_t>(rows);
    p.collection.pages = pages;
    p.collection.total = total;
    if (next) p.collection.next = "http://h/api/makes/v2?limit=2&page=" + std::to_string(next);
    return p;
}

std::string failure(const vc::Page& p, std::int64_t number, const vc::Paging* first) {
    try {
        vc::check_paging(p, number, first);
    } catch (const vc::PaginationError& e) {
        EXPECT_EQ(e.url, p.url);
        return e.what();
    }
    return "";
}

}  // namespace

TEST(Paging, ConsistentCrawlPasses) {
    const vc::Paging first = vc::paging_of(page(1, 2), 1);
    EXPECT_EQ(failure(page(1, 2), 1, nullptr), "");
    EXPECT_EQ(failure(page(2, 3), 2, &first), "");
    EXPECT_EQ(failure(page(3, 0, 1), 3, &first), "");
    vc::Page bare;  // an array answer: no paging block
    bare.rows = 7;
    EXPECT_EQ(failure(bare, 1, nullptr), "");
}

TEST(Paging, EveryContradictionIsNamed) {
    const vc::Paging first = vc::paging_of(page(1, 2), 1);
    vc::Page short_page = page(2, 3);
    short_page.rows = 1;
    EXPECT_EQ(failure(short_page, 2, &first), "page 2 says count=2 but holds 1 records");
    EXPECT_EQ(failure(page(2, 3, 2, 4), 2, &first), "page 2 reports pages=4, total=5 but page 1 reported pages=3, total=5");
    EXPECT_EQ(failure(page(2, 3, 2, 3, 6), 2, &first), "page 2 reports pages=3, total=6 but page 1 reported pages=3, total=5");
    EXPECT_EQ(failure(page(2, 0), 2, &first), "page 2 of 3 has no next link");
    EXPECT_EQ(failure(page(2, 2), 2, &first), "page 2's next link repeats page 2: http://h/api/makes/v2?limit=2&page=2");
    EXPECT_EQ(failure(page(1, 3), 1, nullptr), "page 1's next link skips to page 3: http://h/api/makes/v2?limit=2&page=3");
    EXPECT_EQ(failure(page(3, 3, 1), 3, &first), "last page 3's next link repeats page 3: http://h/api/makes/v2?limit=2&page=3");
    EXPECT_EQ(failure(page(3, 4, 1), 3, &first), "last page 3 of 3 has a next link: http://h/api/makes/v2?limit=2&page=4");
}

TEST(Paging, NegativeSizesAreRefused) {
    EXPECT_EQ(failure(page(1, 0, 2, -5, -1), 1, nullptr), "page 1 announces a negative size: pages=-5, total=-1, count=2");
    EXPECT_EQ(failure(page(1, 0, 2, 1, -1), 1, nullptr), "page 1 announces a negative size: pages=1, total=-1, count=2");
    vc::Page negative_count = page(1, 2);
    negative_count.collection.count = -2;
    EXPECT_EQ(failure(negative_count, 1, nullptr), "page 1 announces a negative size: pages=3, total=5, count=-2");
}

TEST(Paging, LinkPageNumbers) {
    EXPECT_FALSE(vc::link_page("").has_value());
    EXPECT_EQ(vc::link_page("http://h/api/makes/v2"), 1);
    EXPECT_EQ(vc::link_page("http://h/api/makes/v2?limit=2"), 1);
    EXPECT_EQ(vc::link_page("/api/makes/v2?limit=2&page=12"), 12);
    EXPECT_EQ(vc::link_page("/api/makes/v2?page=%33#frag"), 3);
    try {
        vc::link_page("/api/makes/v2?page=two");
        FAIL() << "no exception";
    } catch (const vc::PaginationError& e) {
        EXPECT_STREQ(e.what(), "next link has a non-numeric page 'two'");
        EXPECT_EQ(e.url, "/api/makes/v2?page=two");
    }
}
