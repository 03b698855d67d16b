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

/*
 * The event loop (Transport.swift): lws runs on a libuv loop the transport owns ("foreign"), so
 * that a round of the loop costs what is ready (epoll) rather than a poll() over every open
 * descriptor. lws 4.1.6 loads its libuv glue (libwebsockets-evlib_uv.so) when the context is
 * created with LWS_SERVER_OPTION_LIBUV.
 */
#include <uv.h>
#include <stdlib.h>

static inline uint64_t bridged_option_libuv(void) { return (uint64_t)LWS_SERVER_OPTION_LIBUV; }

/* Loads lws's libuv glue once for the life of the process (RTLD_NODELETE): lws dlcloses it when
 * a context is destroyed, and handles whose close callbacks live in it may still be on the loop
 * then. 0 when loaded; -1 when the file is missing (the caller falls back to poll). */
#include <dlfcn.h>
static inline int bridged_uv_glue_load(void) {
    static void *handle;
    if (!handle) handle = dlopen(LWS_INSTALL_LIBDIR "/libwebsockets-evlib_uv.so", RTLD_NOW | RTLD_NODELETE);
    return handle ? 0 : -1;
}

/* A new loop, or NULL. */
static inline void *bridged_uv_loop_new(void) {
    uv_loop_t *loop = (uv_loop_t *)malloc(sizeof(uv_loop_t));
    if (!loop) return NULL;
    if (uv_loop_init(loop) != 0) { free(loop); return NULL; }
    return loop;
}

/* One round: waits for at least one event (a socket, a timer, lws_cancel_service). */
static inline int bridged_uv_run_once(void *loop) {
    return uv_run((uv_loop_t *)loop, UV_RUN_ONCE);
}

/* After lws_context_destroy(ctx): runs the loop until lws's handles have closed (at most
 * `rounds` non-blocking rounds), completes the destroy, then closes and frees the loop. 0 when the loop closed; otherwise the loop is
 * left allocated (a handle is still open) and -1 is returned. */
static inline int bridged_uv_loop_finish(void *loop, int rounds, struct lws_context *ctx) {
    uv_loop_t *l = (uv_loop_t *)loop;
    int busy = 1;
    while (rounds-- > 0 && (busy = uv_run(l, UV_RUN_NOWAIT))) {}
    /* On a foreign loop lws 4.1.6 stops its destroy once the handles are closing and nothing
     * finishes it: a second call, once they are closed, frees the context. */
    if (!busy && ctx) lws_context_destroy(ctx);
    if (uv_loop_close(l) != 0) return -1;
    free(l);
    return 0;
}

/* After lws_create_context failed: lws may have left handles on the loop that point into the
 * context it freed, so the loop must never run again. Closed and freed when nothing is left on
 * it; otherwise left allocated (a small, bounded leak per failed start). */
static inline void bridged_uv_loop_abandon(void *loop) {
    uv_loop_t *l = (uv_loop_t *)loop;
    if (uv_loop_close(l) == 0) free(l);
}

/* `foreign_loops` for lws_context_creation_info: an array of one loop pointer. */
static inline void bridged_info_set_foreign_loop(struct lws_context_creation_info *info, void **slot, void *loop) {
    slot[0] = loop;
    info->foreign_loops = slot;
}


/*
 * The transport's own timer on that loop (EventLoop.epoll). lws's timers on libuv are armed in
 * whole milliseconds, rounded down, and re-armed with 0 ms until the microsecond deadline is
 * reached: a busy loop through the last millisecond before each deadline, which with a deadline
 * every few hundred µs never ends. This one is armed with the delay rounded up to whole
 * milliseconds after refreshing the loop's clock; the owner checks its microsecond deadline
 * when it fires and re-arms if it came early.
 */
typedef void (*bridged_uv_timer_cb_t)(void *owner);
typedef struct bridged_uv_timer {
    uv_timer_t timer;
    void *owner;
    bridged_uv_timer_cb_t cb;
} bridged_uv_timer_t;

static inline void bridged__uv_timer_fired(uv_timer_t *t) {
    bridged_uv_timer_t *b = (bridged_uv_timer_t *)t;
    b->cb(b->owner);
}

static inline void bridged__uv_timer_closed(uv_handle_t *h) { free(h); }

static inline bridged_uv_timer_t *bridged_uv_timer_new(void *loop, void *owner, bridged_uv_timer_cb_t cb) {
    bridged_uv_timer_t *b = (bridged_uv_timer_t *)calloc(1, sizeof(bridged_uv_timer_t));
    if (!b) return NULL;
    if (uv_timer_init((uv_loop_t *)loop, &b->timer) != 0) { free(b); return NULL; }
    b->owner = owner;
    b->cb = cb;
    return b;
}

static inline void bridged_uv_timer_arm(bridged_uv_timer_t *b, int64_t relative_us) {
    uv_update_time(b->timer.loop);
    uint64_t ms = relative_us <= 0 ? 0 : (uint64_t)((relative_us + 999) / 1000);
    uv_timer_start(&b->timer, bridged__uv_timer_fired, ms, 0);
}

static inline void bridged_uv_timer_stop(bridged_uv_timer_t *b) { uv_timer_stop(&b->timer); }

/* Stops and closes the timer; its memory is freed by the loop (bridged_uv_loop_finish). */
static inline void bridged_uv_timer_close(bridged_uv_timer_t *b) {
    uv_timer_stop(&b->timer);
    uv_close((uv_handle_t *)&b->timer, bridged__uv_timer_closed);
}


/* The descriptor of lws's wake-up pipe (eventfd) on `loop`: the one libuv poll watcher whose
 * descriptor is not a socket; -1 when there is none. (See bridged_wire_hold_on_close.) */
#include <sys/stat.h>
static inline void bridged__uv_find_pipe(uv_handle_t *h, void *arg) {
    int *out = (int *)arg;
    if (*out >= 0 || h->type != UV_POLL) return;
    uv_os_fd_t fd;
    struct stat st;
    if (uv_fileno(h, &fd) == 0 && fstat(fd, &st) == 0 && !S_ISSOCK(st.st_mode)) *out = fd;
}
static inline int bridged_uv_pipe_fd(void *loop) {
    int fd = -1;
    uv_walk((uv_loop_t *)loop, bridged__uv_find_pipe, &fd);
    return fd;
}

/* Hands the heap's free pages back to the system (glibc; a no-op elsewhere). */
#if defined(__GLIBC__)
#include <malloc.h>
static inline void bridged_malloc_trim(void) { (void)malloc_trim(0); }
#else
static inline void bridged_malloc_trim(void) {}
#endif

/* Bytes lws holds for the connection that the socket did not take yet (0: none). */
static inline int bridged_lws_has_buffered_out(struct lws *wsi) { return lws_partial_buffered(wsi); }

/* Closes the connection at lws's next service of it (from outside its own callback). */
static inline void bridged_lws_kill_async(struct lws *wsi) {
    lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
    lws_cancel_service_pt(wsi);
}

#endif
