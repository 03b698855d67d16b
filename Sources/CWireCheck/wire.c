/*
 * The `recv` interposer behind CWireCheck.h: per-descriptor stream state for the connections the
 * transport registers, pass-through for everything else.
 */
#define _GNU_SOURCE
#include "CWireCheck.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

/* ---------------------------------------------------------------------------------------------
 * The scanners (pure) */

long bridged_wire_scan_head(bridged_wire_state_t *s, const uint8_t *buf, size_t n, uint32_t limit) {
    /* `have`: 0 inside a line, 1 just after a LF, 2 after a LF and a CR. A LF in state 1 or 2
     * ends the head: CRLFCRLF, and also LFLF and LFCRLF, which some parsers accept (seeing an
     * end libwebsockets does not see only makes us stop following the connection). */
    uint8_t have = s->have;
    uint32_t count = s->head_bytes;
    for (size_t i = 0; i < n; i++) {
        if (count >= limit) {
            s->phase = BRIDGED_WIRE_REFUSED;
            s->head_bytes = count;
            return -1;
        }
        count++;
        uint8_t c = buf[i];
        if (c == '\n') {
            if (have) {
                s->phase = BRIDGED_WIRE_AFTER_HEAD;
                s->have = 0;
                s->head_bytes = count;
                return (long)(i + 1);
            }
            have = 1;
        } else if (c == '\r') {
            have = have == 1 ? 2 : 0;
        } else {
            have = 0;
        }
    }
    s->have = have;
    s->head_bytes = count;
    return (long)n;
}

static inline __attribute__((always_inline)) long scan_frames(bridged_wire_state_t *s, const uint8_t *buf,
                                                              size_t n) {
    uint8_t have = s->have, need = s->need;
    uint64_t rem = s->remaining;
    size_t i = 0, start = 0; /* start: where the current frame began in buf (0: earlier) */
    while (i < n) {
        if (have == 0 && rem == 0 && n - i >= 14) {
            /* Fast path: a whole header (at most 14 bytes) is in the buffer. */
            if ((buf[i] & 0x0f) == 0x9) s->flags |= BRIDGED_WIRE_PING_SEEN;
            uint8_t b1 = buf[i + 1];
            if (!(b1 & 0x80)) {
                s->phase = BRIDGED_WIRE_FAILED;
                s->remaining = 0;
                return (long)i;
            }
            uint8_t len7 = b1 & 0x7f;
            uint64_t len = len7;
            size_t header = 6;
            if (len7 == 126) {
                len = (uint64_t)buf[i + 2] << 8 | buf[i + 3];
                header = 8;
            } else if (len7 == 127) {
                len = 0;
                for (int k = 2; k < 10; k++) len = len << 8 | buf[i + k];
                header = 14;
            }
            i += header;
            rem = len; /* the payload: skipped below */
        }
        if (have == 0) {
            if (rem) { /* payload: skipped by count */
                size_t left = n - i;
                if (rem >= left) {
                    rem -= left;
                    i = n;
                    break;
                }
                i += (size_t)rem;
                rem = 0;
                continue;
            }
            /* byte 0 (FIN, RSV, opcode: libwebsockets checks them; a ping is noted) */
            if ((buf[i] & 0x0f) == 0x9) s->flags |= BRIDGED_WIRE_PING_SEEN;
            start = i;
            have = 1;
            i++;
            continue;
        }
        uint8_t c = buf[i++];
        if (have == 1) {
            if (!(c & 0x80)) {
                s->phase = BRIDGED_WIRE_FAILED;
                s->have = 0;
                s->remaining = 0;
                return (long)start;
            }
            uint8_t len7 = c & 0x7f;
            need = len7 == 126 ? 8 : len7 == 127 ? 14 : 6; /* + masking key */
            rem = len7 < 126 ? len7 : 0;
            have = 2;
            continue;
        }
        if (have < need - 4) rem = (rem << 8) | c; /* extended length, big-endian */
        if (++have == need) have = 0;              /* masking key done: payload follows */
    }
    s->have = have;
    s->need = need;
    s->remaining = rem;
    return (long)n;
}

long bridged_wire_scan_frames(bridged_wire_state_t *s, const uint8_t *buf, size_t n) {
    return scan_frames(s, buf, n);
}

/* ---------------------------------------------------------------------------------------------
 * The per-descriptor table */

/* Descriptors at or above this are never tracked (the transport caps descriptors at the open-file
 * limit, which it raises to at most this many). Zero-filled static storage: pages nobody touches
 * cost nothing. */
#define SLOTS (1u << 20)

/* A descriptor's stream state: 16 bytes, four to a cache line. What a read does not need (the
 * owner to report a failure to, the close hold) lives in tables of its own, so that a message
 * reads one small slot (at 1,000 connections a slot is usually a cold line). */
typedef struct slot {
    bridged_wire_state_t st;
} slot_t;
_Static_assert(sizeof(slot_t) == 16, "a slot is a quarter of a cache line");

enum { HOLD_NONE = 0, HOLD_ARMED = 1, HOLD_PLACEHOLDER = 2 };

typedef struct owner {
    void *owner;
    uint64_t id;
} owner_t;

static slot_t slots[SLOTS];
static owner_t owners[SLOTS];
static uint8_t holds[SLOTS]; /* HOLD_*: see bridged_wire_hold_on_close */
#define OWNER(sl) (owners[(sl) - slots])
#define HELD(sl) (holds[(sl) - slots])
static bridged_wire_fail_fn fail_hook;

/* Every field goes through relaxed atomics: a descriptor's slot is used by one service thread at
 * a time, but a closed descriptor can be reused by another thread's connection. */
#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

static inline bridged_wire_state_t load_state(slot_t *sl) {
    bridged_wire_state_t s;
    s.phase = LOAD(sl->st.phase);
    s.have = LOAD(sl->st.have);
    s.need = LOAD(sl->st.need);
    s.flags = LOAD(sl->st.flags);
    s.head_bytes = LOAD(sl->st.head_bytes);
    s.remaining = LOAD(sl->st.remaining);
    return s;
}

static inline void store_state(slot_t *sl, const bridged_wire_state_t *s) {
    STORE(sl->st.have, s->have);
    STORE(sl->st.need, s->need);
    STORE(sl->st.head_bytes, s->head_bytes);
    STORE(sl->st.remaining, s->remaining);
    STORE(sl->st.flags, s->flags);
    STORE(sl->st.phase, s->phase);
}

static inline slot_t *slot_for(int fd) {
    return (unsigned)fd < SLOTS ? &slots[fd] : NULL;
}

static void start_head(slot_t *sl) {
    bridged_wire_state_t s = {BRIDGED_WIRE_HEAD, 0, 0, 0, 0, 0};
    store_state(sl, &s);
}

void bridged_wire_set_fail_hook(bridged_wire_fail_fn hook) {
    __atomic_store_n(&fail_hook, hook, __ATOMIC_RELEASE);
}

void bridged_wire_track(int fd) {
    slot_t *sl = slot_for(fd);
    if (!sl) return;
    STORE(OWNER(sl).owner, NULL);
    STORE(OWNER(sl).id, 0);
    start_head(sl);
}

void bridged_wire_http_request(int fd, int64_t body_bytes) {
    slot_t *sl = slot_for(fd);
    if (!sl || LOAD(sl->st.phase) != BRIDGED_WIRE_AFTER_HEAD) return;
    if (body_bytes < 0) {
        STORE(sl->st.phase, BRIDGED_WIRE_UNTRACKED);
    } else if (body_bytes == 0) {
        start_head(sl);
    } else {
        bridged_wire_state_t s = {BRIDGED_WIRE_BODY, 0, 0, 0, 0, (uint64_t)body_bytes};
        store_state(sl, &s);
    }
}

void bridged_wire_established(int fd, void *owner, uint64_t id) {
    slot_t *sl = slot_for(fd);
    if (!sl) return;
    if (LOAD(sl->st.phase) != BRIDGED_WIRE_AFTER_HEAD) {
        /* The head's end was not seen here: frames cannot be followed. */
        STORE(sl->st.phase, BRIDGED_WIRE_UNTRACKED);
        return;
    }
    STORE(OWNER(sl).owner, owner);
    STORE(OWNER(sl).id, id);
    bridged_wire_state_t s = {BRIDGED_WIRE_FRAMES, 0, 0, 0, 0, 0};
    store_state(sl, &s);
}

void bridged_wire_closing(int fd) {
    slot_t *sl = slot_for(fd);
    if (sl && LOAD(sl->st.phase) == BRIDGED_WIRE_FAILED) STORE(sl->st.phase, BRIDGED_WIRE_CLOSING);
}

int bridged_wire_ping_pending(int fd) {
    slot_t *sl = slot_for(fd);
    return sl && (LOAD(sl->st.flags) & BRIDGED_WIRE_PING_SEEN) ? 1 : 0;
}

void bridged_wire_ping_answered(int fd) {
    slot_t *sl = slot_for(fd);
    if (sl && LOAD(sl->st.flags)) STORE(sl->st.flags, 0);
}

int bridged_wire_phase(int fd) {
    slot_t *sl = slot_for(fd);
    return sl ? LOAD(sl->st.phase) : BRIDGED_WIRE_UNTRACKED;
}

/* ---------------------------------------------------------------------------------------------
 * recv */

typedef ssize_t (*recv_fn)(int, void *, size_t, int);

/* A sanitizer runtime linked into the executable defines `recv` weakly (ours wins) and its
 * interceptor under these names; calling it keeps the sanitizer's view of the read. */
extern ssize_t __interceptor_recv(int, void *, size_t, int) __attribute__((weak));

static ssize_t syscall_recv(int fd, void *buf, size_t len, int flags) {
    return (ssize_t)syscall(SYS_recvfrom, fd, buf, len, flags, NULL, NULL);
}

static recv_fn real_recv_fn;

static recv_fn real_recv(void) {
    recv_fn f = __atomic_load_n(&real_recv_fn, __ATOMIC_ACQUIRE);
    if (__builtin_expect(f != NULL, 1)) return f;
    if (__interceptor_recv) {
        f = __interceptor_recv;
    } else {
        f = (recv_fn)dlsym(RTLD_NEXT, "recv");
        if (!f) f = syscall_recv;
    }
    __atomic_store_n(&real_recv_fn, f, __ATOMIC_RELEASE);
    return f;
}

static const char refusal[] =
    "HTTP/1.1 431 Request Header Fields Too Large\r\n"
    "Content-Type: text/plain; charset=utf-8\r\n"
    "Content-Length: 51\r\n"
    "X-Content-Type-Options: nosniff\r\n"
    "Connection: close\r\n"
    "\r\n"
    "request header fields too large (limit 4096 bytes)\n";

static ssize_t eagain(void) {
    errno = EAGAIN;
    return -1;
}

/* Input is read and dropped (the connection is ending); the peer's close ends it. */
static ssize_t drain(slot_t *sl, recv_fn r, int fd, void *buf, size_t len, int flags) {
    ssize_t n = r(fd, buf, len, flags);
    if (n > 0) return eagain();
    if (n == 0) STORE(sl->st.phase, BRIDGED_WIRE_UNTRACKED);
    return n;
}

static ssize_t tracked(slot_t *sl, recv_fn r, int fd, uint8_t *buf, size_t len, int flags) {
    bridged_wire_state_t s = load_state(sl);
    ssize_t n;
    switch (s.phase) {
    case BRIDGED_WIRE_FRAMES: {
        n = r(fd, buf, len, flags);
        if (n <= 0) return n;
        long ok = scan_frames(&s, buf, (size_t)n);
        if (__builtin_expect(ok == n, 1)) {
            STORE(sl->st.flags, s.flags);
            STORE(sl->st.have, s.have);
            STORE(sl->st.need, s.need);
            STORE(sl->st.remaining, s.remaining);
            return n;
        }
        store_state(sl, &s);
        bridged_wire_fail_fn hook = __atomic_load_n(&fail_hook, __ATOMIC_ACQUIRE);
        if (hook) hook(LOAD(OWNER(sl).owner), LOAD(OWNER(sl).id));
        /* Only the frames before the unmasked one reach libwebsockets. */
        return ok > 0 ? (ssize_t)ok : eagain();
    }
    case BRIDGED_WIRE_HEAD: {
        /* Peek, then consume exactly the head: what follows it (frames pipelined behind an
         * upgrade, a body) stays in the socket until the transport has said what it is. */
        n = r(fd, buf, len, flags | MSG_PEEK);
        if (n <= 0) return n;
        long k = bridged_wire_scan_head(&s, buf, (size_t)n, BRIDGED_WIRE_MAX_HEAD);
        if (k < 0) {
            store_state(sl, &s);
            (void)send(fd, refusal, sizeof refusal - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
            shutdown(fd, SHUT_WR);
            (void)r(fd, buf, (size_t)n, flags);
            return eagain();
        }
        ssize_t m = r(fd, buf, (size_t)k, flags);
        if (m != k) {
            STORE(sl->st.phase, BRIDGED_WIRE_UNTRACKED);
            return m;
        }
        store_state(sl, &s);
        return m;
    }
    case BRIDGED_WIRE_BODY: {
        size_t want = s.remaining < len ? (size_t)s.remaining : len;
        n = r(fd, buf, want, flags);
        if (n <= 0) return n;
        s.remaining -= (uint64_t)n;
        if (s.remaining == 0) start_head(sl);
        else STORE(sl->st.remaining, s.remaining);
        return n;
    }
    case BRIDGED_WIRE_FAILED:
    case BRIDGED_WIRE_REFUSED:
        return drain(sl, r, fd, buf, len, flags);
    case BRIDGED_WIRE_CLOSING:
        /* Read what is there (so that closing sends a FIN, not a RST), then report the end. */
        for (int i = 0; i < 16; i++) {
            n = r(fd, buf, len, flags | MSG_DONTWAIT);
            if (n <= 0) break;
        }
        STORE(sl->st.phase, BRIDGED_WIRE_UNTRACKED);
        return 0;
    default: /* AFTER_HEAD: a read the transport did not announce; stop following */
        STORE(sl->st.phase, BRIDGED_WIRE_UNTRACKED);
        return r(fd, buf, len, flags);
    }
}

ssize_t recv(int fd, void *buf, size_t len, int flags) {
    recv_fn r = real_recv();
    if ((unsigned)fd < SLOTS && LOAD(slots[fd].st.phase) != BRIDGED_WIRE_UNTRACKED
        && !(flags & MSG_PEEK) && len > 0)
        return tracked(&slots[fd], r, fd, (uint8_t *)buf, len, flags);
    return r(fd, buf, len, flags);
}

/* close: a descriptor's state ends with it (before the number can be reused). */
typedef int (*close_fn)(int);
extern int __interceptor_close(int) __attribute__((weak));

static int syscall_close(int fd) { return (int)syscall(SYS_close, fd); }

static close_fn real_close_fn;
static close_fn real_close(void);

/* A close of a held descriptor (bridged_wire_hold_on_close): the first replaces it with
 * /dev/null in one step (dup3 closes the old file and reuses the number), the second closes
 * that placeholder, after which the number may be reused safely. */
static int close_held(slot_t *sl, close_fn f, int fd) {
    if (LOAD(HELD(sl)) == HOLD_ARMED) {
        int p = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (p >= 0 && dup3(p, fd, O_CLOEXEC) == fd) {
            (void)f(p);
            STORE(HELD(sl), HOLD_PLACEHOLDER);
            return 0;
        }
        if (p >= 0) (void)f(p);
    }
    STORE(HELD(sl), HOLD_NONE);
    return f(fd);
}

static close_fn real_close(void) {
    close_fn f = __atomic_load_n(&real_close_fn, __ATOMIC_ACQUIRE);
    if (__builtin_expect(f != NULL, 1)) return f;
    static __thread int resolving;
    if (resolving) return syscall_close; /* in case dlsym closes something itself */
    resolving = 1;
    if (__interceptor_close) {
        f = __interceptor_close;
    } else {
        f = (close_fn)dlsym(RTLD_NEXT, "close");
        if (!f) f = syscall_close;
    }
    resolving = 0;
    __atomic_store_n(&real_close_fn, f, __ATOMIC_RELEASE);
    return f;
}

int close(int fd) {
    close_fn f = real_close();
    if ((unsigned)fd < SLOTS) {
        slot_t *sl = &slots[fd];
        if (LOAD(sl->st.phase) != BRIDGED_WIRE_UNTRACKED) STORE(sl->st.phase, BRIDGED_WIRE_UNTRACKED);
        if (__builtin_expect(LOAD(HELD(sl)) != HOLD_NONE, 0)) return close_held(sl, f, fd);
    }
    return f(fd);
}

void bridged_wire_hold_on_close(int fd) {
    slot_t *sl = slot_for(fd);
    if (sl) STORE(HELD(sl), HOLD_ARMED);
}

void bridged_wire_release_held(int fd) {
    slot_t *sl = slot_for(fd);
    if (!sl) return;
    uint8_t held = LOAD(HELD(sl));
    STORE(HELD(sl), HOLD_NONE);
    if (held == HOLD_PLACEHOLDER) (void)real_close()(fd);
}

/* Resolved at load, so that a child between fork and exec (which may only call async-signal-safe
 * functions) never reaches dlsym through these. */
__attribute__((constructor)) static void resolve_at_load(void) {
    (void)real_recv();
    (void)real_close();
}
