#ifndef QUEUEPLAYER_CSOXR_SHIM_H
#define QUEUEPLAYER_CSOXR_SHIM_H
// libsoxr, the SoX resampler library, for Swift: resamples items whose rate differs from the output's.
#include <soxr.h>
#endif
