#ifndef QUEUEPLAYER_CPULSE_SHIM_H
#define QUEUEPLAYER_CPULSE_SHIM_H
// The asynchronous libpulse API. Helpers below expose what C macros hide from Swift.
#include <pulse/pulseaudio.h>

/// PA_INVALID_INDEX is a macro; Swift cannot import it.
static inline uint32_t cpulse_invalid_index(void) { return PA_INVALID_INDEX; }

/// PA_CONTEXT_IS_GOOD as a plain function returning int.
static inline int cpulse_context_is_good(pa_context_state_t state) { return PA_CONTEXT_IS_GOOD(state); }

/// PA_STREAM_IS_GOOD as a plain function returning int.
static inline int cpulse_stream_is_good(pa_stream_state_t state) { return PA_STREAM_IS_GOOD(state); }
#endif
