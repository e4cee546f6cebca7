/* A throwaway peer for benchmarks/serve_peers.py: libh2o 2.2 over libuv (Debian libh2o-dev,
 * libuv1-dev) answering every request with one file's bytes as application/json, keep-alive; one
 * libuv loop per thread, each with its own SO_REUSEPORT listener. Not part of the product.
 * usage: h2o_serve PORT FILE THREADS */
#define H2O_USE_LIBUV 1
#include <arpa/inet.h>
#include <h2o.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

static h2o_globalconf_t config;
static h2o_iovec_t body;
static int port;

struct worker {
    uv_loop_t loop;
    uv_tcp_t listener;
    h2o_context_t ctx;
    h2o_accept_ctx_t accept_ctx;
};

static int on_req(h2o_handler_t *self, h2o_req_t *req) {
    static h2o_generator_t generator = {NULL, NULL};
    (void)self;
    req->res.status = 200;
    req->res.reason = "OK";
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL, H2O_STRLIT("application/json"));
    req->res.content_length = body.len;
    h2o_start_response(req, &generator);
    h2o_iovec_t b = body;
    h2o_send(req, &b, 1, H2O_SEND_STATE_FINAL);
    return 0;
}

static void on_accept(uv_stream_t *listener, int status) {
    if (status != 0) return;
    struct worker *w = listener->data;
    uv_tcp_t *conn = h2o_mem_alloc(sizeof(*conn));
    uv_tcp_init(listener->loop, conn);
    if (uv_accept(listener, (uv_stream_t *)conn) != 0) {
        uv_close((uv_handle_t *)conn, (uv_close_cb)free);
        return;
    }
    uv_tcp_nodelay(conn, 1);
    h2o_accept(&w->accept_ctx, h2o_uv_socket_create((uv_stream_t *)conn, (uv_close_cb)free));
}

static void *run(void *arg) {
    struct worker *w = arg;
    uv_loop_init(&w->loop);
    h2o_context_init(&w->ctx, &w->loop, &config);
    w->accept_ctx.ctx = &w->ctx;
    w->accept_ctx.hosts = config.hosts;
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((unsigned short)port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0) { perror("bind"); exit(1); }
    uv_tcp_init(&w->loop, &w->listener);
    uv_tcp_open(&w->listener, fd);
    w->listener.data = w;
    if (uv_listen((uv_stream_t *)&w->listener, 1024, on_accept) != 0) { fprintf(stderr, "listen failed\n"); exit(1); }
    uv_run(&w->loop, UV_RUN_DEFAULT);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: h2o_serve PORT FILE THREADS\n"); return 2; }
    port = atoi(argv[1]);
    FILE *f = fopen(argv[2], "rb");
    if (!f) { perror(argv[2]); return 1; }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    body.base = malloc((size_t)n);
    body.len = (size_t)n;
    if (!body.base || fread(body.base, 1, body.len, f) != body.len) return 1;
    fclose(f);
    h2o_config_init(&config);
    h2o_hostconf_t *host = h2o_config_register_host(&config, h2o_iovec_init(H2O_STRLIT("default")), 65535);
    h2o_pathconf_t *path = h2o_config_register_path(host, "/", 0);
    h2o_handler_t *handler = h2o_create_handler(path, sizeof(*handler));
    handler->on_req = on_req;
    int threads = atoi(argv[3]);
    if (threads < 1) threads = 1;
    pthread_t *t = calloc((size_t)threads, sizeof *t);
    struct worker *w = calloc((size_t)threads, sizeof *w);
    for (int i = 0; i < threads; ++i) pthread_create(&t[i], NULL, run, &w[i]);
    for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);
    return 0;
}
