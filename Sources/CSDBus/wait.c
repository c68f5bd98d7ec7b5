// Waiting on the bus without polling: the MPRIS thread sleeps until the bus has something for it, a timeout of the
// bus's own falls due, or another thread writes the wake-up eventfd (a new state to publish, or stop).
#include "csdbus.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

int csdbus_wake_fd_new(void) {
    int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    return fd < 0 ? -errno : fd;
}

void csdbus_wake(int wake_fd) {
    uint64_t one = 1;
    // A full counter (2^64 - 2 wake-ups not yet taken) still wakes the reader: nothing to handle.
    (void)!write(wake_fd, &one, sizeof one);
}

int csdbus_wait(sd_bus *bus, int wake_fd) {
    int events = sd_bus_get_events(bus);
    if (events < 0) return events;
    int fd = sd_bus_get_fd(bus);
    if (fd < 0) return fd;
    int timeout_ms = -1;
    uint64_t until_us = 0;
    if (sd_bus_get_timeout(bus, &until_us) >= 0 && until_us != UINT64_MAX) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        uint64_t now_us = (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
        uint64_t left_ms = until_us <= now_us ? 0 : (until_us - now_us + 999) / 1000;
        timeout_ms = left_ms > INT32_MAX ? INT32_MAX : (int)left_ms;
    }
    struct pollfd fds[2] = {{.fd = fd, .events = (short)events}, {.fd = wake_fd, .events = POLLIN}};
    int ready = poll(fds, 2, timeout_ms);
    if (ready < 0) return errno == EINTR ? 0 : -errno;
    if (fds[1].revents & POLLIN) {
        uint64_t count;
        (void)!read(wake_fd, &count, sizeof count);
    }
    return ready;
}
