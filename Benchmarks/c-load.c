/*
 * c-load: a second load generator, written in C on epoll, for the daemon's throughput ratios.
 *
 * bridge-load (Swift) is the benchmark's own generator. This one exists so that the ratio
 * "bridged / raw libwebsockets echo" can be checked with a generator of another make, the kind an
 * outside measurement uses (C, epoll, its own process pinned to another core): if both agree, the
 * ratio is not an artefact of either. Same workloads, same requests, same JSON summary line:
 *
 *   c-load echo|navigation --url ws://127.0.0.1:PORT/bridge --connections N
 *          [--duration S] [--warmup S] [--depth D] [--daemon-pid PID] [--label L] [--json]
 *
 *   echo        hello (page), then ping -> {} in a loop, one request in flight per page. Against
 *               the raw echo server the echoed request is the reply.
 *   navigation  hello (page), then pwa-navigate, pwa-rendered (D deep), then D x (back,
 *               pwa-rendered), and again; every reply counts (events are read and skipped).
 *
 * Client frames are masked with a zero key (legal; the payload goes as it is). Replies are
 * recognised by their first bytes, `{"id":`; an error reply (`"error"` before the end) is counted
 * and reported. Exit 1 when a page fails or replies with an error. Build: cc -O2 -o c-load c-load.c
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { ECHO, NAVIGATION };
enum { HANDSHAKE, OPEN };

typedef struct {
    int fd;
    int state;
    int hello_done;
    int waiting; /* a request is in flight */
    long step;
    uint64_t sent_at;
    size_t in_len;
    unsigned char in[65536];
} conn_t;

static int workload = ECHO, depth = 4, connections = 100, json = 0;
static double duration = 5, warmup = 1;
static int port = 0;
static long daemon_pid = 0;
static const char *label = "";
static char host[64] = "127.0.0.1";
static char path[256] = "/bridge";

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* CPU seconds (user + system) of a process, from /proc/PID/stat. */
static double cpu_of(long pid) {
    char name[64], buf[1024];
    snprintf(name, sizeof name, "/proc/%ld/stat", pid);
    FILE *f = fopen(name, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    if (!p) return 0;
    unsigned long ut = 0, st = 0;
    /* fields after ')': state(3) ... utime(14) stime(15) */
    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st);
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* Latency histogram: microsecond buckets up to 1 s, then one overflow bucket. */
#define HBUCKETS 1000001
static uint32_t *hist;
static uint64_t hist_count;

static double percentile(double q) {
    uint64_t want = (uint64_t)(q * (double)hist_count), seen = 0;
    for (int i = 0; i < HBUCKETS; i++) {
        seen += hist[i];
        if (seen > want) return i / 1000.0;
    }
    return (HBUCKETS - 1) / 1000.0;
}

static const char *hello_tail = "\"method\":\"hello\",\"params\":{\"protocol\":1,\"role\":\"page\",\"url\":\"http://127.0.0.1:8787/app/\"}}";

static void send_frame(conn_t *c, const char *text, size_t len) {
    unsigned char buf[512];
    size_t h = 0;
    if (len > sizeof buf - 8) {
        fprintf(stderr, "c-load: a request of %zu bytes is larger than the frame buffer\n", len);
        exit(1);
    }
    buf[h++] = 0x81;
    if (len < 126) {
        buf[h++] = 0x80 | (unsigned char)len;
    } else {
        buf[h++] = 0x80 | 126;
        buf[h++] = (unsigned char)(len >> 8);
        buf[h++] = (unsigned char)len;
    }
    memset(buf + h, 0, 4);
    h += 4;
    memcpy(buf + h, text, len);
    h += len;
    /* One request in flight per page: the socket's buffer always has room for it, so a short
       write means something is wrong with the peer, and the run stops rather than measure it. */
    ssize_t w = write(c->fd, buf, h);
    if (w != (ssize_t)h) {
        fprintf(stderr, "c-load: short write (%zd of %zu)%s%s\n", w, h, w < 0 ? ": " : "", w < 0 ? strerror(errno) : "");
        exit(1);
    }
}

static long next_id = 1;

static void send_request(conn_t *c) {
    char msg[400];
    int n;
    long id = next_id++;
    if (!c->hello_done) {
        n = snprintf(msg, sizeof msg, "{\"id\":%ld,%s", id, hello_tail);
    } else if (workload == ECHO) {
        n = snprintf(msg, sizeof msg, "{\"id\":%ld,\"method\":\"ping\",\"params\":{}}", id);
    } else {
        long cycle = 4L * depth, pos = c->step % cycle;
        c->step++;
        if (pos & 1)
            n = snprintf(msg, sizeof msg, "{\"id\":%ld,\"method\":\"pwa-rendered\",\"params\":{}}", id);
        else if (pos < 2L * depth)
            n = snprintf(msg, sizeof msg,
                         "{\"id\":%ld,\"method\":\"pwa-navigate\",\"params\":{\"url\":\"http://127.0.0.1:8787/app/#/products/%ld\"}}",
                         id, pos / 2);
        else
            n = snprintf(msg, sizeof msg, "{\"id\":%ld,\"method\":\"back\",\"params\":{}}", id);
    }
    if (n < 0 || (size_t)n >= sizeof msg) {
        fprintf(stderr, "c-load: a request does not fit its buffer\n");
        exit(1);
    }
    c->sent_at = now_ns();
    c->waiting = 1;
    send_frame(c, msg, (size_t)n);
}

enum { WARMUP, MEASURING, DONE };
static int phase = WARMUP;
static uint64_t replies, error_replies, events, failures;
static char first_error[200];

static void on_text(conn_t *c, const unsigned char *p, size_t n) {
    if (n >= 6 && memcmp(p, "{\"id\":", 6) == 0) {
        if (memmem(p, n, "\"error\"", 7) && !memmem(p, n, "\"method\"", 8)) {
            error_replies++;
            if (!first_error[0]) snprintf(first_error, sizeof first_error, "%.*s", (int)(n < 150 ? n : 150), p);
        }
        c->waiting = 0;
        if (!c->hello_done) {
            c->hello_done = 1;
        } else if (phase == MEASURING) {
            uint64_t us = (now_ns() - c->sent_at) / 1000;
            hist[us < HBUCKETS - 1 ? us : HBUCKETS - 1]++;
            hist_count++;
            replies++;
        }
        if (phase != DONE) send_request(c);
    } else if (phase == MEASURING) {
        events++;
    }
}

/* Parses whole frames out of c->in; returns -1 when the server closed. */
static int on_bytes(conn_t *c) {
    size_t off = 0;
    for (;;) {
        size_t avail = c->in_len - off;
        if (avail < 2) break;
        unsigned char *h = c->in + off;
        size_t len = h[1] & 0x7f, hl = 2;
        if (len == 126) {
            if (avail < 4) break;
            len = (size_t)h[2] << 8 | h[3];
            hl = 4;
        } else if (len == 127) {
            if (avail < 10) break;
            len = 0;
            for (int i = 0; i < 8; i++) len = len << 8 | h[2 + i];
            hl = 10;
        }
        if (len + hl > sizeof c->in) {
            fprintf(stderr, "c-load: a frame of %zu bytes is larger than the read buffer\n", len);
            exit(1);
        }
        if (avail < hl + len) break;
        int op = h[0] & 0x0f, fin = h[0] & 0x80;
        if (op == 8) return -1;
        if (op == 0 || (op == 1 && !fin)) {
            /* The daemon and the echo server send every message whole; a fragment would stall
               this page's one request, so it is an error rather than a quietly lower rate. */
            fprintf(stderr, "c-load: a fragmented message (opcode %d, fin %d): not expected from the peer\n", op, !!fin);
            exit(1);
        }
        if (op == 1) on_text(c, h + hl, len);
        off += hl + len;
    }
    memmove(c->in, c->in + off, c->in_len - off);
    c->in_len -= off;
    return 0;
}

static int parse_url(const char *url) {
    const char *p = strstr(url, "://");
    if (!p) return -1;
    p += 3;
    const char *colon = strchr(p, ':'), *slash = strchr(p, '/');
    if (!colon || (slash && slash < colon)) return -1;
    snprintf(host, sizeof host, "%.*s", (int)(colon - p), p);
    port = atoi(colon + 1);
    if (slash) snprintf(path, sizeof path, "%s", slash);
    return port > 0 ? 0 : -1;
}

static void usage(void) {
    fprintf(stderr, "usage: c-load echo|navigation --url ws://127.0.0.1:PORT/bridge --connections N "
                    "[--duration S] [--warmup S] [--depth D] [--daemon-pid PID] [--label L] [--json]\n");
    exit(64);
}

int main(int argc, char **argv) {
    if (argc < 2) usage();
    if (strcmp(argv[1], "echo") == 0) workload = ECHO;
    else if (strcmp(argv[1], "navigation") == 0) workload = NAVIGATION;
    else usage();
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--json") == 0) { json = 1; continue; }
        if (!v) usage();
        i++;
        if (strcmp(a, "--url") == 0) { if (parse_url(v)) usage(); }
        else if (strcmp(a, "--connections") == 0) connections = atoi(v);
        else if (strcmp(a, "--duration") == 0) duration = atof(v);
        else if (strcmp(a, "--warmup") == 0) warmup = atof(v);
        else if (strcmp(a, "--depth") == 0) depth = atoi(v);
        else if (strcmp(a, "--daemon-pid") == 0) daemon_pid = atol(v);
        else if (strcmp(a, "--label") == 0) label = v;
        else usage();
    }
    if (!port || connections < 1 || depth < 1 || duration <= 0) usage();
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < (rlim_t)connections + 16 && rl.rlim_max >= (rlim_t)connections + 16) {
        rl.rlim_cur = (rlim_t)connections + 16;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    hist = calloc(HBUCKETS, sizeof *hist);
    conn_t *conns = calloc((size_t)connections, sizeof *conns);
    int ep = epoll_create1(0);
    char request[512];
    int rn = snprintf(request, sizeof request,
                      "GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
                      path, host, port);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, host, &sa.sin_addr);
    /* Connect every page (blocking connect + handshake write, then epoll for the rest). */
    for (int i = 0; i < connections; i++) {
        conn_t *c = &conns[i];
        c->fd = socket(AF_INET, SOCK_STREAM, 0);
        if (c->fd < 0) {
            fprintf(stderr, "c-load: socket: %s (raise the file descriptor limit for %d pages)\n", strerror(errno), connections);
            return 1;
        }
        int one = 1;
        setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (connect(c->fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
            fprintf(stderr, "c-load: connect %s:%d: %s\n", host, port, strerror(errno));
            return 1;
        }
        if (write(c->fd, request, (size_t)rn) != rn) return 1;
        fcntl(c->fd, F_SETFL, O_NONBLOCK);
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev);
    }
    uint64_t start = now_ns();
    uint64_t measure_start = start + (uint64_t)(warmup * 1e9), measure_end = measure_start + (uint64_t)(duration * 1e9);
    double load_cpu0 = 0, daemon_cpu0 = 0, t0 = 0;
    struct epoll_event evs[256];
    while (phase != DONE) {
        uint64_t now = now_ns();
        if (phase == WARMUP && now >= measure_start) {
            phase = MEASURING;
            load_cpu0 = cpu_of(getpid());
            daemon_cpu0 = daemon_pid ? cpu_of(daemon_pid) : 0;
            t0 = (double)now / 1e9;
        } else if (phase == MEASURING && now >= measure_end) {
            phase = DONE;
            break;
        }
        int n = epoll_wait(ep, evs, 256, 10);
        for (int k = 0; k < n; k++) {
            conn_t *c = evs[k].data.ptr;
            for (;;) {
                ssize_t r = read(c->fd, c->in + c->in_len, sizeof c->in - c->in_len);
                if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
                if (r <= 0) {
                    failures++;
                    epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
                    break;
                }
                c->in_len += (size_t)r;
                if (c->state == HANDSHAKE) {
                    unsigned char *end = memmem(c->in, c->in_len, "\r\n\r\n", 4);
                    if (!end) continue;
                    if (c->in_len < 12 || memcmp(c->in + 9, "101", 3) != 0) {
                        fprintf(stderr, "c-load: handshake refused: %.*s\n", 40, c->in);
                        return 1;
                    }
                    size_t used = (size_t)(end + 4 - c->in);
                    memmove(c->in, c->in + used, c->in_len - used);
                    c->in_len -= used;
                    c->state = OPEN;
                    send_request(c);
                }
                if (on_bytes(c) < 0) {
                    failures++;
                    epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
                    break;
                }
            }
        }
    }
    uint64_t end = now_ns();
    double seconds = (double)end / 1e9 - t0;
    /* A page whose request has waited over a second at the end is stalled: counted as failed. */
    for (int i = 0; i < connections; i++)
        if (conns[i].waiting && end - conns[i].sent_at > 1000000000ull) failures++;
    double load_cpu = (cpu_of(getpid()) - load_cpu0) / seconds;
    double daemon_cpu = daemon_pid ? (cpu_of(daemon_pid) - daemon_cpu0) / seconds : 0;
    double rate = (double)replies / seconds;
    if (json)
        printf("{\"label\":\"%s\",\"generator\":\"c-load\",\"workload\":\"%s\",\"connections\":%d,"
               "\"repliesPerSecond\":%.0f,\"replies\":%llu,\"events\":%llu,\"errorReplies\":%llu,"
               "\"failedConnections\":%llu,\"loadCpu\":%.2f,\"daemonCpu\":%.2f,"
               "\"latencyMs\":{\"p50\":%.3f,\"p99\":%.3f,\"p999\":%.3f}}\n",
               label, workload == ECHO ? "echo" : "navigation", connections, rate,
               (unsigned long long)replies, (unsigned long long)events, (unsigned long long)error_replies,
               (unsigned long long)failures, load_cpu, daemon_cpu, percentile(0.5), percentile(0.99),
               percentile(0.999));
    else
        printf("%s %d pages: %.0f replies/s, p50 %.3f ms, p99 %.3f ms, load CPU %.2f, daemon CPU %.2f\n",
               workload == ECHO ? "echo" : "navigation", connections, rate, percentile(0.5), percentile(0.99),
               load_cpu, daemon_cpu);
    if (first_error[0]) fprintf(stderr, "c-load: first error reply: %s\n", first_error);
    return (error_replies || failures) ? 1 : 0;
}
