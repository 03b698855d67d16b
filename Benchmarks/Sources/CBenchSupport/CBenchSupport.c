#include "CBenchSupport.h"

#include <sys/epoll.h>
#include <time.h>
#include <libwebsockets.h>

int bench_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int bench_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data) {
    struct epoll_event ev;
    ev.events = events;
    ev.data.u64 = data;
    return epoll_ctl(epfd, op, fd, &ev);
}

int bench_epoll_wait(int epfd, uint64_t *data, uint32_t *events, int max, int64_t timeout_ns) {
    struct epoll_event evs[1024];
    struct timespec ts;
    int n;
    if (max > 1024) max = 1024;
    if (timeout_ns >= 0) {
        ts.tv_sec = timeout_ns / 1000000000;
        ts.tv_nsec = timeout_ns % 1000000000;
    }
    n = epoll_pwait2(epfd, evs, max, timeout_ns >= 0 ? &ts : NULL, NULL);
    for (int i = 0; i < n; i++) {
        data[i] = evs[i].data.u64;
        events[i] = evs[i].events;
    }
    return n;
}

int bench_sha1(const uint8_t *input, size_t len, uint8_t *digest) {
    return lws_SHA1(input, len, digest) ? 0 : -1;
}

int bench_base64(const uint8_t *input, int len, char *out, int out_size) {
    return lws_b64_encode_string((const char *)input, len, out, out_size);
}
