#ifndef QUEUEPLAYER_CSOXR_SHIM_H
#define QUEUEPLAYER_CSOXR_SHIM_H
// libsoxr, the SoX resampler library, for Swift.
#include <soxr.h>
#endif
