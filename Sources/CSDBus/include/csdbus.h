#ifndef QUEUEPLAYER_CSDBUS_H
#define QUEUEPLAYER_CSDBUS_H
// The MPRIS2 object for sd-bus: its vtables (sd-bus's vtable macros cannot be written in Swift) and the few
// variadic sd-bus calls Swift cannot import, as plain functions. Every callback goes to one Swift object.
#include <systemd/sd-bus.h>

/// What the vtables call. `context` is handed back unchanged (an unretained Swift object).
typedef struct csdbus_handlers {
    void *context;
    /// A method call on any of the three interfaces: read the arguments from `message` and reply to it.
    int (*method)(void *context, sd_bus_message *message, sd_bus_error *error);
    /// A property read: append the value (without the variant) to `reply`.
    int (*get)(void *context, const char *interface, const char *property, sd_bus_message *reply,
               sd_bus_error *error);
    /// A property write: read the value from `value`.
    int (*set)(void *context, const char *interface, const char *property, sd_bus_message *value,
               sd_bus_error *error);
} csdbus_handlers;

/// Registers org.mpris.MediaPlayer2, .Player and .TrackList at `path`. `handlers` must outlive the bus.
int csdbus_add_mpris_objects(sd_bus *bus, const char *path, const csdbus_handlers *handlers);

/// Replies to `call` with no value.
int csdbus_reply_empty(sd_bus_message *call);

/// Emits PropertiesChanged for one property of `interface` (its getter supplies the value).
int csdbus_emit_property_changed(sd_bus *bus, const char *path, const char *interface, const char *property);

/// A non-blocking eventfd for waking the bus thread, or a negative errno.
int csdbus_wake_fd_new(void);

/// Wakes a thread waiting in csdbus_wait on `wake_fd`. Any thread; never blocks.
void csdbus_wake(int wake_fd);

/// Blocks until the bus has something to process, a timeout of its own falls due, or csdbus_wake(wake_fd) is
/// called; takes the wake-up. Returns the number of ready descriptors (0 on a timeout or a signal), or a negative
/// errno when the bus can no longer be waited on (it was closed).
int csdbus_wait(sd_bus *bus, int wake_fd);

#endif
