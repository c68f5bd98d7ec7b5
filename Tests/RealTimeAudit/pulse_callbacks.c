// Marks the scope of PulseAudio stream write callbacks (the audio callback path of PulseAudioSink), so that what
// the callback's own code does there is counted apart from the rest of libpulse's thread: the executable's
// pa_stream_set_write_callback wraps each callback in a trampoline, and its wrappers of the libpulse calls a callback
// makes mark those calls as libpulse's own.
#define _GNU_SOURCE
#include "counters.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

// libpulse's types, as far as they are needed here (pointers and an enum: the ABI of <pulse/stream.h>).
typedef struct pa_stream pa_stream;
typedef void (*pa_stream_request_cb_t)(pa_stream *stream, size_t bytes, void *userdata);
typedef void (*pa_free_cb_t)(void *pointer);

/// A callback and its userdata, as the player registered them. One per registration, never freed: the audit
/// process registers a handful.
struct registered_callback {
    pa_stream_request_cb_t callback;
    void *userdata;
};

static _Atomic long write_callback_calls;

long audit_write_callback_calls(void) { return atomic_load_explicit(&write_callback_calls, memory_order_relaxed); }

static void write_callback_trampoline(pa_stream *stream, size_t bytes, void *userdata) {
    struct registered_callback *registered = userdata;
    atomic_fetch_add_explicit(&write_callback_calls, 1, memory_order_relaxed);
    audit_callback_depth++;
    registered->callback(stream, bytes, registered->userdata);
    audit_callback_depth--;
}

void pa_stream_set_write_callback(pa_stream *stream, pa_stream_request_cb_t callback, void *userdata) {
    typedef void (*setter)(pa_stream *, pa_stream_request_cb_t, void *);
    RESOLVE_ONCE(real, dlsym(RTLD_NEXT, "pa_stream_set_write_callback"), setter)
    if (callback == NULL) {
        real(stream, NULL, NULL);
        return;
    }
    struct registered_callback *registered = malloc(sizeof *registered);
    registered->callback = callback;
    registered->userdata = userdata;
    real(stream, write_callback_trampoline, registered);
}

/// Defines `name` to forward to libpulse's, counted as libpulse's own work.
#define LIBRARY_CALL(result_type, name, parameters, arguments)                                                      \
    result_type name parameters {                                                                                    \
        typedef result_type(*function) parameters;                                                                   \
        RESOLVE_ONCE(real, dlsym(RTLD_NEXT, #name), function)                                                        \
        audit_library_depth++;                                                                                       \
        result_type result = real arguments;                                                                         \
        audit_library_depth--;                                                                                       \
        return result;                                                                                               \
    }

LIBRARY_CALL(int, pa_stream_begin_write, (pa_stream * stream, void **data, size_t *bytes), (stream, data, bytes))
LIBRARY_CALL(int, pa_stream_cancel_write, (pa_stream * stream), (stream))
LIBRARY_CALL(int, pa_stream_write,
    (pa_stream * stream, const void *data, size_t bytes, pa_free_cb_t free_data, int64_t offset, int seek),
    (stream, data, bytes, free_data, offset, seek))
LIBRARY_CALL(size_t, pa_stream_writable_size, (const pa_stream *stream), (stream))
LIBRARY_CALL(const void *, pa_stream_get_timing_info, (pa_stream * stream), (stream))
LIBRARY_CALL(const void *, pa_stream_get_buffer_attr, (pa_stream * stream), (stream))
