#include "csdbus.h"

#include <stddef.h>

static int method_trampoline(sd_bus_message *message, void *userdata, sd_bus_error *error) {
    const csdbus_handlers *handlers = userdata;
    return handlers->method(handlers->context, message, error);
}

static int get_trampoline(sd_bus *bus, const char *path, const char *interface, const char *property,
                          sd_bus_message *reply, void *userdata, sd_bus_error *error) {
    (void)bus;
    (void)path;
    const csdbus_handlers *handlers = userdata;
    return handlers->get(handlers->context, interface, property, reply, error);
}

static int set_trampoline(sd_bus *bus, const char *path, const char *interface, const char *property,
                          sd_bus_message *value, void *userdata, sd_bus_error *error) {
    (void)bus;
    (void)path;
    const csdbus_handlers *handlers = userdata;
    return handlers->set(handlers->context, interface, property, value, error);
}

#define CHANGES SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE
#define CONSTANT SD_BUS_VTABLE_PROPERTY_CONST

static const sd_bus_vtable root_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD("Raise", "", "", method_trampoline, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Quit", "", "", method_trampoline, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_PROPERTY("CanQuit", "b", get_trampoline, 0, CONSTANT),
    SD_BUS_PROPERTY("CanRaise", "b", get_trampoline, 0, CONSTANT),
    SD_BUS_PROPERTY("CanSetFullscreen", "b", get_trampoline, 0, CONSTANT),
    SD_BUS_PROPERTY("Fullscreen", "b", get_trampoline, 0, CONSTANT),
    SD_BUS_PROPERTY("HasTrackList", "b", get_trampoline, 0, CONSTANT),
    SD_BUS_PROPERTY("Identity", "s", get_trampoline, 0, CONSTANT),
    SD_BUS_PROPERTY("SupportedUriSchemes", "as", get_trampoline, 0, CONSTANT),
    SD_BUS_PROPERTY("SupportedMimeTypes", "as", get_trampoline, 0, CONSTANT),
    SD_BUS_VTABLE_END};

static const sd_bus_vtable player_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD("Next", "", "", method_trampoline, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Previous", "", "", method_trampoline, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Pause", "", "", method_trampoline, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("PlayPause", "", "", method_trampoline, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Stop", "", "", method_trampoline, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Play", "", "", method_trampoline, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Seek", "x", "", method_trampoline, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("SetPosition", "ox", "", method_trampoline, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("OpenUri", "s", "", method_trampoline, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_SIGNAL("Seeked", "x", 0),
    SD_BUS_PROPERTY("PlaybackStatus", "s", get_trampoline, 0, CHANGES),
    SD_BUS_WRITABLE_PROPERTY("LoopStatus", "s", get_trampoline, set_trampoline, 0, CHANGES),
    SD_BUS_WRITABLE_PROPERTY("Rate", "d", get_trampoline, set_trampoline, 0, CHANGES),
    SD_BUS_WRITABLE_PROPERTY("Shuffle", "b", get_trampoline, set_trampoline, 0, CHANGES),
    SD_BUS_PROPERTY("Metadata", "a{sv}", get_trampoline, 0, CHANGES),
    SD_BUS_WRITABLE_PROPERTY("Volume", "d", get_trampoline, set_trampoline, 0, CHANGES),
    SD_BUS_PROPERTY("Position", "x", get_trampoline, 0, 0),
    SD_BUS_PROPERTY("MinimumRate", "d", get_trampoline, 0, CONSTANT),
    SD_BUS_PROPERTY("MaximumRate", "d", get_trampoline, 0, CONSTANT),
    SD_BUS_PROPERTY("CanGoNext", "b", get_trampoline, 0, CHANGES),
    SD_BUS_PROPERTY("CanGoPrevious", "b", get_trampoline, 0, CHANGES),
    SD_BUS_PROPERTY("CanPlay", "b", get_trampoline, 0, CHANGES),
    SD_BUS_PROPERTY("CanPause", "b", get_trampoline, 0, CHANGES),
    SD_BUS_PROPERTY("CanSeek", "b", get_trampoline, 0, CHANGES),
    SD_BUS_PROPERTY("CanControl", "b", get_trampoline, 0, CONSTANT),
    SD_BUS_VTABLE_END};

static const sd_bus_vtable tracklist_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD("GetTracksMetadata", "ao", "aa{sv}", method_trampoline, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("AddTrack", "sob", "", method_trampoline, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("RemoveTrack", "o", "", method_trampoline, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("GoTo", "o", "", method_trampoline, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_SIGNAL("TrackListReplaced", "aoo", 0),
    SD_BUS_SIGNAL("TrackAdded", "a{sv}o", 0),
    SD_BUS_SIGNAL("TrackRemoved", "o", 0),
    SD_BUS_SIGNAL("TrackMetadataChanged", "oa{sv}", 0),
    SD_BUS_PROPERTY("Tracks", "ao", get_trampoline, 0, SD_BUS_VTABLE_PROPERTY_EMITS_INVALIDATION),
    SD_BUS_PROPERTY("CanEditTracks", "b", get_trampoline, 0, CONSTANT),
    SD_BUS_VTABLE_END};

int csdbus_add_mpris_objects(sd_bus *bus, const char *path, const csdbus_handlers *handlers) {
    void *userdata = (void *)handlers;
    int result = sd_bus_add_object_vtable(bus, NULL, path, "org.mpris.MediaPlayer2", root_vtable, userdata);
    if (result < 0) return result;
    result = sd_bus_add_object_vtable(bus, NULL, path, "org.mpris.MediaPlayer2.Player", player_vtable, userdata);
    if (result < 0) return result;
    return sd_bus_add_object_vtable(bus, NULL, path, "org.mpris.MediaPlayer2.TrackList", tracklist_vtable,
                                    userdata);
}

int csdbus_reply_empty(sd_bus_message *call) { return sd_bus_reply_method_return(call, NULL); }

int csdbus_emit_property_changed(sd_bus *bus, const char *path, const char *interface, const char *property) {
    char *names[] = {(char *)property, NULL};
    return sd_bus_emit_properties_changed_strv(bus, path, interface, names);
}
