#ifndef BRIDGED_CWEBSOCKETS_SHIM_H
#define BRIDGED_CWEBSOCKETS_SHIM_H
#include <libwebsockets.h>

/* What Swift cannot import from libwebsockets.h: function-like and arithmetic macros. */
static inline int bridged_lws_pre(void) { return LWS_PRE; }

#endif
