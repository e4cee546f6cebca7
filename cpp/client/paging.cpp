// Paging consistency: see vehicledata/client/paging.h.
#include "vehicledata/client/paging.h"

#include <cctype>

#include "vehicledata/client/errors.h"
#include "vehicledata/format.h"

namespace vehicledata::client {

namespace {

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// int() of Python: optional blanks and sign around decimal digits.
std::optional<std::int64_t> integer(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    bool negative = false;
    if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
        negative = s.front() == '-';
        s.remove_prefix(1);
    }
    if (s.empty() || s.size() > 18) return std::nullopt;
    std::int64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + (c - '0');
    }
    return negative ? -v : v;
}

}  // namespace

std::optional<std::int64_t> link_page(std::string_view link) {
    if (link.empty()) return std::nullopt;
    std::size_t q = link.find('?');
    if (q == std::string_view::npos) return 1;
    std::string_view query = link.substr(q + 1);
    query = query.substr(0, query.find('#'));
    std::vector<format::QueryParam> params;
    try {
        params = format::parse_query(query);
    } catch (const format::QueryStringError& e) {
        throw PaginationError(std::string("next link has a malformed query: ") + e.what(), std::string(link));
    }
    for (const auto& p : params) {
        if (p.name != "page") continue;
        if (auto v = integer(p.value)) return v;
        throw PaginationError("next link has a non-numeric page " + quoted(p.value), std::string(link));
    }
    return 1;
}

Paging paging_of(const Page& page, std::int64_t number) {
    Paging p;
    p.number = number;
    const auto rows = static_cast<std::int64_t>(page.rows);
    if (!page.collection.present) {
        p.count = p.total = rows;
        return p;
    }
    const Collection& c = page.collection;
    p.count = c.count;
    p.pages = c.pages;
    p.total = c.total;
    p.next = c.next;
    return p;
}

void check_paging(const Page& page, std::int64_t number, const Paging* first) {
    const Paging p = paging_of(page, number);
    const std::string n = std::to_string(number);
    auto fail = [&](const std::string& message) { throw PaginationError(message, page.url); };
    if (p.pages < 0 || p.total < 0 || p.count < 0)
        fail("page " + n + " announces a negative size: pages=" + std::to_string(p.pages) + ", total=" +
             std::to_string(p.total) + ", count=" + std::to_string(p.count));
    if (p.count != static_cast<std::int64_t>(page.rows))
        fail("page " + n + " says count=" + std::to_string(p.count) + " but holds " + std::to_string(page.rows) + " records");
    if (first && (p.pages != first->pages || p.total != first->total))
        fail("page " + n + " reports pages=" + std::to_string(p.pages) + ", total=" + std::to_string(p.total) + " but page " +
             std::to_string(first->number) + " reported pages=" + std::to_string(first->pages) +
             ", total=" + std::to_string(first->total));
    const std::optional<std::int64_t> next = link_page(p.next);
    if (number < p.pages) {
        if (!next) fail("page " + n + " of " + std::to_string(p.pages) + " has no next link");
        if (*next <= number) fail("page " + n + "'s next link repeats page " + std::to_string(*next) + ": " + p.next);
        if (*next != number + 1) fail("page " + n + "'s next link skips to page " + std::to_string(*next) + ": " + p.next);
    } else if (next && p.pages > 0) {
        if (*next <= number) fail("last page " + n + "'s next link repeats page " + std::to_string(*next) + ": " + p.next);
        fail("last page " + n + " of " + std::to_string(p.pages) + " has a next link: " + p.next);
    }
}

}  // namespace vehicledata::client
