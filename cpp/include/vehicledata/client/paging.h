// Paging consistency of a crawl, checked in C++ as its pages arrive
// (docs/client.md, "Pagination"): a page whose collection block contradicts
// itself or the crawl's first page raises PaginationError with its URL.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "vehicledata/client/page.h"

namespace vehicledata::client {

// The page a link asks for: its `page` query parameter, 1 when it has none;
// nullopt for an empty link.  PaginationError for a page that is not a number.
std::optional<std::int64_t> link_page(std::string_view link);

// The paging block a page states, numbered as requested.  A page without a
// collection block stands for one page of its rows without a next link.
struct Paging {
    std::int64_t number = 1;
    std::int64_t count = 0, pages = 1, total = 0;
    std::string next;
};
Paging paging_of(const Page& page, std::int64_t number);

// PaginationError (url: the page's) when page `number` contradicts itself
// (count vs rows; before the last page a next link missing, repeating or
// skipping; a next link on the last page) or `first`, the crawl's first page
// (pages, total).  `first` is null when checking the first page itself.
void check_paging(const Page& page, std::int64_t number, const Paging* first);

}  // namespace vehicledata::client
