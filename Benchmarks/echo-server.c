/*
 * The transport's limit: a minimal libwebsockets 4.1.6 echo server, configured like bridged's
 * transport (no permessage-deflate, UTF-8 validation on, one message in flight per connection,
 * rx buffer 16 KiB), answering every text message with the same bytes.
 *
 *   cc -O2 -o echo-server echo-server.c $(pkg-config --cflags --libs libwebsockets)
 *   ./echo-server PORT        (prints "listening on http://127.0.0.1:PORT"; SIGINT/SIGTERM stop it)
 */
#include <libwebsockets.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MESSAGE 16384

struct conn {
    size_t len;        /* bytes of the pending echo (0: none) */
    int pending;
    unsigned char *buf; /* LWS_PRE + MAX_MESSAGE, allocated on first message */
};

static volatile int stop;
static struct lws_context *context;

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len) {
    struct conn *c = user;
    switch (reason) {
    case LWS_CALLBACK_RECEIVE:
        if (!lws_is_first_fragment(wsi) || !lws_is_final_fragment(wsi) || len > MAX_MESSAGE)
            return -1; /* the benchmark only sends small, unfragmented messages */
        if (!c->buf && !(c->buf = malloc(LWS_PRE + MAX_MESSAGE)))
            return -1;
        memcpy(c->buf + LWS_PRE, in, len);
        c->len = len;
        c->pending = 1;
        lws_callback_on_writable(wsi);
        return 0;
    case LWS_CALLBACK_SERVER_WRITEABLE:
        if (!c->pending)
            return 0;
        c->pending = 0;
        if (lws_write(wsi, c->buf + LWS_PRE, c->len, LWS_WRITE_TEXT) < (int)c->len)
            return -1;
        return 0;
    case LWS_CALLBACK_CLOSED:
        free(c->buf);
        c->buf = NULL;
        return 0;
    default:
        return lws_callback_http_dummy(wsi, reason, user, in, len);
    }
}

static const struct lws_protocols protocols[] = {
    { "echo", callback, sizeof(struct conn), MAX_MESSAGE, 0, NULL, 0 },
    { NULL, NULL, 0, 0, 0, NULL, 0 }
};

static const struct lws_protocol_vhost_options pvo_default = { NULL, NULL, "default", "1" };
static const struct lws_protocol_vhost_options pvo = { NULL, &pvo_default, "echo", "" };

static void on_signal(int sig) {
    (void)sig;
    stop = 1;
    if (context)
        lws_cancel_service(context);
}

int main(int argc, char **argv) {
    struct lws_context_creation_info info;
    int port = argc > 1 ? atoi(argv[1]) : 0;
    lws_set_log_level(LLL_ERR, NULL);
    memset(&info, 0, sizeof info);
    info.port = port;
    info.iface = "127.0.0.1";
    info.protocols = protocols;
    info.pvo = &pvo;
    info.gid = -1;
    info.uid = -1;
    info.options = LWS_SERVER_OPTION_VALIDATE_UTF8 | LWS_SERVER_OPTION_DISABLE_IPV6 |
                   LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND;
    context = lws_create_context(&info);
    if (!context) {
        fprintf(stderr, "echo-server: cannot listen on 127.0.0.1:%d\n", port);
        return 1;
    }
    port = lws_get_vhost_listen_port(lws_get_vhost_by_name(context, "default"));
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    printf("listening on http://127.0.0.1:%d\n", port);
    fflush(stdout);
    while (!stop && lws_service(context, 0) >= 0) {
    }
    lws_context_destroy(context);
    return 0;
}
