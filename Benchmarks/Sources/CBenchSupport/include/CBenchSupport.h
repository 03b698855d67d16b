#ifndef BRIDGED_BENCH_SUPPORT_H
#define BRIDGED_BENCH_SUPPORT_H
/*
 * What bridge-load needs from C that Swift's Glibc module does not offer: epoll, TCP_NODELAY, and
 * the WebSocket handshake's SHA-1 and base64 (from libwebsockets, so the load generator carries no
 * hash of its own).
 */
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

/* epoll_create1(EPOLL_CLOEXEC). */
int bench_epoll_create(void);

/* op: EPOLL_CTL_ADD 1, DEL 2, MOD 3; `data` comes back with each event. */
int bench_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data);

/* Waits up to `timeout_ns` (negative: forever); fills `data`/`events` with at most `max` (<= 1024)
 * ready entries and returns their count (-1 with errno on failure). */
int bench_epoll_wait(int epfd, uint64_t *data, uint32_t *events, int max, int64_t timeout_ns);

/* SHA-1 of `len` bytes into `digest` (20 bytes). Returns 0 on success. */
int bench_sha1(const uint8_t *input, size_t len, uint8_t *digest);

/* Base64 of `len` bytes into `out` (NUL-terminated); returns its length or -1 when `out` is short. */
int bench_base64(const uint8_t *input, int len, char *out, int out_size);

#endif
