#ifndef BRIDGED_CWEBSOCKETS_SHIM_H
#define BRIDGED_CWEBSOCKETS_SHIM_H
#include <libwebsockets.h>
#include <stdint.h>
#include <stddef.h>

/*
 * What Swift cannot import from libwebsockets.h: function-like and arithmetic macros, OR'd option
 * sets, container_of. Everything here is a tiny static inline function with no state.
 */

/* LWS_PRE: headroom lws_write() needs in front of every payload (16 on 64-bit targets). */
static inline int bridged_lws_pre(void) { return LWS_PRE; }


/* lws_write with an integer protocol (the lws_write_protocol enum, possibly OR'd with NO_FIN). */
static inline int bridged_lws_write(struct lws *wsi, unsigned char *buf, size_t len, int proto) {
    return lws_write(wsi, buf, len, (enum lws_write_protocol)proto);
}

/* The write flags for fragment `is_start`/`is_end` of a text message. */
static inline int bridged_ws_text_flags(int is_start, int is_end) {
    return lws_write_ws_flags(LWS_WRITE_TEXT, is_start, is_end);
}
/* LWS_WRITE_CLOSE (4) is private in the 4.1 headers ("handled by lws_close_reason"), but
 * lws_write accepts it and emits a close frame at once; see Transport.sendClose for why. */
static inline int bridged_write_close(void) { return 4; }
static inline int bridged_write_http(int is_final) {
    return is_final ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP;
}

/* A per-connection deadline: lws closes the connection after `secs` unless it is reset (0 clears). */
static inline void bridged_lws_set_timeout(struct lws *wsi, int secs) {
    lws_set_timeout(wsi, secs ? PENDING_TIMEOUT_USER_OK : NO_PENDING_TIMEOUT, secs);
}

/*
 * A timer node: the lws sul must sit at a stable address for as long as it is scheduled, so Swift
 * allocates one of these on the heap per pending timer. `owner` is the transport (unretained),
 * `serial` identifies the Swift-side closure.
 */
typedef struct bridged_timer {
    lws_sorted_usec_list_t sul;
    uint64_t serial;
    void *owner;
} bridged_timer_t;

static inline bridged_timer_t *bridged_timer_from_sul(lws_sorted_usec_list_t *sul) {
    return lws_container_of(sul, bridged_timer_t, sul);
}

static inline void bridged_timer_schedule(struct lws_context *ctx, bridged_timer_t *t,
                                          sul_cb_t cb, int64_t relative_us) {
    lws_sul_schedule(ctx, 0, &t->sul, cb, (lws_usec_t)relative_us);
}

static inline void bridged_timer_cancel(bridged_timer_t *t) {
    lws_sul_cancel(&t->sul);
}

/* Raises the soft open-file limit to the hard one (at most 1,048,576: lws sizes its tables by
 * it); the soft limit before and after go to *before / *after. 0, or -1 when unreadable. */
#include <sys/resource.h>
static inline int bridged_raise_nofile(uint64_t *before, uint64_t *after) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return -1;
    *before = (uint64_t)rl.rlim_cur;
    rlim_t want = rl.rlim_max;
    if (want == RLIM_INFINITY || want > 1048576) want = 1048576;
    if (want > rl.rlim_cur) {
        struct rlimit raised = { want, rl.rlim_max };
        if (setrlimit(RLIMIT_NOFILE, &raised) == 0) rl.rlim_cur = want;
    }
    *after = (uint64_t)rl.rlim_cur;
    return 0;
}

#endif
