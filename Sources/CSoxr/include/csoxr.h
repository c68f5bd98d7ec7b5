#ifndef QUEUEPLAYER_CSOXR_H
#define QUEUEPLAYER_CSOXR_H
// libsoxr, the SoX resampler library, for Swift, loaded only when an item needs resampling: most queues never do,
// and linking it mapped libsoxr and the OpenMP runtime it needs (libgomp) into every daemon, 0.4 MB resident.
#include <soxr.h>

/// The libsoxr functions QueuePlayer calls.
typedef struct csoxr_functions {
    soxr_t _Nullable (*_Nonnull create)(
        double input_rate, double output_rate, unsigned channels, soxr_error_t _Nullable *_Nullable error,
        soxr_io_spec_t const *_Nullable io, soxr_quality_spec_t const *_Nullable quality,
        soxr_runtime_spec_t const *_Nullable runtime);
    soxr_error_t _Nullable (*_Nonnull process)(
        soxr_t _Nonnull resampler, soxr_in_t _Nullable input, size_t input_frames, size_t *_Nullable taken,
        soxr_out_t _Nonnull output, size_t output_frames, size_t *_Nullable produced);
    soxr_error_t _Nullable (*_Nonnull clear)(soxr_t _Nonnull resampler);
    void (*_Nonnull delete)(soxr_t _Nonnull resampler);
    soxr_io_spec_t (*_Nonnull io_spec)(soxr_datatype_t input_type, soxr_datatype_t output_type);
    soxr_quality_spec_t (*_Nonnull quality_spec)(unsigned long recipe, unsigned long flags);
    soxr_runtime_spec_t (*_Nonnull runtime_spec)(unsigned num_threads);
} csoxr_functions;

/// libsoxr's functions, loading libsoxr.so.0 on the first call; NULL when it cannot be loaded, with `error` set to
/// the loader's message. Any thread; the library is loaded once per process and never unloaded.
const csoxr_functions *_Nullable csoxr_load(const char *_Nullable *_Nonnull error);

#endif
