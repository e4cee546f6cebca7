#include "vehicledata/client/library_versions.h"

#include <curl/curl.h>
#include <openssl/crypto.h>
#include <simdjson.h>
#include <sqlite3.h>

namespace vehicledata::client {

namespace {

// simdjson.h defines SIMDJSON_VERSION as a bare token (3.0.1), not a string.
#define VD_STRINGIFY_(x) #x
#define VD_STRINGIFY(x) VD_STRINGIFY_(x)

struct Feature {
    int bit;
    const char* name;
};

// The CURL_VERSION_* bits of libcurl 7.88 that can be set, named as `curl --version` names them.
constexpr Feature kFeatures[] = {
    {CURL_VERSION_IPV6, "IPv6"},         {CURL_VERSION_SSL, "SSL"},
    {CURL_VERSION_LIBZ, "libz"},         {CURL_VERSION_NTLM, "NTLM"},
    {CURL_VERSION_ASYNCHDNS, "AsynchDNS"}, {CURL_VERSION_SPNEGO, "SPNEGO"},
    {CURL_VERSION_LARGEFILE, "Largefile"}, {CURL_VERSION_IDN, "IDN"},
    {CURL_VERSION_GSSAPI, "GSS-API"},    {CURL_VERSION_KERBEROS5, "Kerberos"},
    {CURL_VERSION_UNIX_SOCKETS, "UnixSockets"}, {CURL_VERSION_HTTP2, "HTTP2"},
    {CURL_VERSION_HTTPS_PROXY, "HTTPS-proxy"}, {CURL_VERSION_BROTLI, "brotli"},
    {CURL_VERSION_ALTSVC, "alt-svc"},    {CURL_VERSION_HTTP3, "HTTP3"},
    {CURL_VERSION_ZSTD, "zstd"},         {CURL_VERSION_HSTS, "HSTS"},
    {CURL_VERSION_THREADSAFE, "threadsafe"}, {CURL_VERSION_TLSAUTH_SRP, "TLS-SRP"},
    {CURL_VERSION_PSL, "PSL"},           {CURL_VERSION_CONV, "CharConv"},
};

std::string curl_detail(const curl_version_info_data* info) {
    std::string out = "TLS ";
    out += info->ssl_version ? info->ssl_version : "none";
    out += "; zlib ";
    out += info->libz_version ? info->libz_version : "none";
    if (info->age >= CURLVERSION_SIXTH && info->nghttp2_version) {
        out += "; nghttp2 ";
        out += info->nghttp2_version;
    }
    out += "; features:";
    for (const auto& f : kFeatures) {
        if (info->features & f.bit) {
            out += ' ';
            out += f.name;
        }
    }
    out += "; protocols:";
    for (const char* const* p = info->protocols; p && *p; ++p) {
        out += ' ';
        out += *p;
    }
    return out;
}

}  // namespace

std::vector<LibraryVersion> library_versions() {
    const curl_version_info_data* info = curl_version_info(CURLVERSION_NOW);
    return {
        {"libcurl", info->version, curl_detail(info)},
        {"simdjson", VD_STRINGIFY(SIMDJSON_VERSION), ""},
        {"SQLite", sqlite3_libversion(), ""},
        {"OpenSSL", OpenSSL_version(OPENSSL_VERSION), ""},
    };
}

}  // namespace vehicledata::client
