#ifndef BRIDGED_CWIRECHECK_H
#define BRIDGED_CWIRECHECK_H
#include <stddef.h>
#include <stdint.h>

/*
 * Wire checks libwebsockets 4.1.6 cannot make for us: it accepts unmasked client frames
 * (RFC 6455 §5.1 wants the connection failed with 1002) and drops request heads larger than its
 * header buffer without any response.
 *
 * This target defines `recv`. Calls libwebsockets makes bind to it (the executable's definition
 * comes first in symbol lookup); every other call, and every descriptor the transport did not
 * register, goes straight to the real `recv` (or a sanitizer's interceptor of it). For a
 * registered descriptor it follows the byte stream: the request head (its length, up to the end of
 * the head, read exactly so that nothing after it is consumed early), then, once the transport
 * reports the WebSocket established, every frame header (mask bit, 7/16/64-bit length, masking
 * key) and payloads skipped by count, across any read boundaries. It also defines `close`, which
 * ends the state of a descriptor before its number can be reused.
 *
 * Threads: the state of a descriptor is touched only by the thread that services it (the lws
 * service thread); other threads calling `recv` on other descriptors read one relaxed atomic.
 */

/* Phases of a descriptor. */
enum {
    BRIDGED_WIRE_UNTRACKED = 0,
    BRIDGED_WIRE_HEAD = 1,       /* reading a request head */
    BRIDGED_WIRE_AFTER_HEAD = 2, /* head consumed; waiting for ESTABLISHED or the request's body size */
    BRIDGED_WIRE_BODY = 3,       /* reading a plain HTTP request body of known size */
    BRIDGED_WIRE_FRAMES = 4,     /* WebSocket frames */
    BRIDGED_WIRE_FAILED = 5,     /* an unmasked frame arrived: input dropped until our close is out */
    BRIDGED_WIRE_CLOSING = 6,    /* our close frame is out: drain what is there, then end */
    BRIDGED_WIRE_REFUSED = 7,    /* the 431 is out: input drained until the peer closes */
};

/* Request heads (request line through the blank line) longer than this are answered 431 here,
 * before libwebsockets parses them (its header buffer is this size). */
#define BRIDGED_WIRE_MAX_HEAD 8192

/* `flags`: a ping frame was read since the transport last said libwebsockets answered it (lws
 * answers pings only when the socket is writable, before the transport's own WRITEABLE). */
#define BRIDGED_WIRE_PING_SEEN 1

/* The state of one stream. Plain fields: the scanners below are pure functions over it. */
typedef struct bridged_wire_state {
    uint8_t phase;
    uint8_t have;      /* HEAD: line-end progress; FRAMES: header bytes seen of the current frame */
    uint8_t need;      /* FRAMES: header bytes of the current frame (6, 8 or 14) */
    uint8_t flags;     /* FRAMES: BRIDGED_WIRE_PING_SEEN */
    uint32_t head_bytes; /* HEAD: bytes of the head so far */
    uint64_t remaining;  /* FRAMES: payload bytes left (while in a header: the length being read);
                            BODY: body bytes left */
} bridged_wire_state_t;

/* HEAD: scans `n` bytes of a head. Returns the bytes that belong to the head: `k <= n` when the
 * head ends at byte k (phase becomes AFTER_HEAD), `n` when it goes on, or -1 when the head is
 * longer than `limit` (phase becomes REFUSED). */
long bridged_wire_scan_head(bridged_wire_state_t *s, const uint8_t *buf, size_t n, uint32_t limit);

/* FRAMES: scans `n` bytes of client frames. Returns `n` when every frame header seen is masked;
 * otherwise the offset in `buf` where the first unmasked frame starts (0 when it started in an
 * earlier buffer), and the phase becomes FAILED. */
long bridged_wire_scan_frames(bridged_wire_state_t *s, const uint8_t *buf, size_t n);

/* Called on the service thread from inside `recv` when descriptor `fd`, registered with `owner`
 * and `id`, receives an unmasked frame. */
typedef void (*bridged_wire_fail_fn)(void *owner, uint64_t id);

/* The process-wide hook for failures (set once, before any descriptor is registered). */
void bridged_wire_set_fail_hook(bridged_wire_fail_fn hook);

/* An accepted connection: follow it from its first byte (a request head). */
void bridged_wire_track(int fd);
/* The connection's current request is plain HTTP with a body of `body_bytes` (-1: unknown): the
 * next head follows it. */
void bridged_wire_http_request(int fd, int64_t body_bytes);
/* The connection became a WebSocket (ESTABLISHED): check its frames from here on. */
void bridged_wire_established(int fd, void *owner, uint64_t id);
/* Our close frame for a failed connection is out: end it at the next read. */
void bridged_wire_closing(int fd);
/* A ping was read on `fd` and libwebsockets may not have sent its pong yet (1), or not (0). The
 * transport then writes its replies from WRITEABLE, where lws sends pending pongs first. */
int bridged_wire_ping_pending(int fd);
/* The transport's WRITEABLE ran for `fd`: lws has sent any pong it owed. */
void bridged_wire_ping_answered(int fd);

/* libwebsockets 4.1.6 on a libuv loop closes the descriptor of its wake-up pipe twice when its
 * context is destroyed: once directly, once more from the loop's close callback of the watcher.
 * In between the number is free, and another thread of the process can be given it (a new
 * listener, a client socket), which the second close then closes. `bridged_wire_hold_on_close(fd)`
 * makes the next `close(fd)` replace the descriptor with a placeholder (/dev/null, by `dup3`, so
 * the number is never free) instead of freeing it; the close after that closes the placeholder.
 * `bridged_wire_release_held(fd)` ends the hold (closing a placeholder still in place). */
void bridged_wire_hold_on_close(int fd);
void bridged_wire_release_held(int fd);

/* The phase of `fd` (tests and diagnostics). */
int bridged_wire_phase(int fd);

#endif
