/* A throwaway peer for benchmarks/serve_peers.py: libmicrohttpd (Debian libmicrohttpd-dev) answering
 * every request with one file's bytes as application/json, keep-alive, epoll, a thread pool.
 * Not part of the product.  usage: mhd_serve PORT FILE THREADS */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct MHD_Response *answer;

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **state) {
    static int seen;
    (void)cls; (void)url; (void)method; (void)version; (void)upload;
    if (*state == NULL) {  /* the head only: answer on the next call (MHD's documented pattern) */
        *state = &seen;
        return MHD_YES;
    }
    *upload_size = 0;
    return MHD_queue_response(c, MHD_HTTP_OK, answer);
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: mhd_serve PORT FILE THREADS\n"); return 2; }
    FILE *f = fopen(argv[2], "rb");
    if (!f) { perror(argv[2]); return 1; }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *body = malloc((size_t)n);
    if (!body || fread(body, 1, (size_t)n, f) != (size_t)n) return 1;
    fclose(f);
    answer = MHD_create_response_from_buffer((size_t)n, body, MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(answer, "Content-Type", "application/json");
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((unsigned short)atoi(argv[1]));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_TURBO, 0, NULL, NULL, &handle, NULL,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr, MHD_OPTION_THREAD_POOL_SIZE, (unsigned)atoi(argv[3]),
        MHD_OPTION_CONNECTION_LIMIT, 8192u, MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_LISTEN_BACKLOG_SIZE,
        1024u, MHD_OPTION_END);
    if (!d) { fprintf(stderr, "MHD_start_daemon failed\n"); return 1; }
    for (;;) pause();
}
