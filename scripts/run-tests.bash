# Sourced by scripts/test and scripts/sanitize: which suites run one test at a time, and which alone.
# shellcheck shell=bash
timing_suite="playerctlTests.AudibleTimeTests"
# The tests that run private PulseAudio and PipeWire servers (and the template comparison) load both cores; beside
# them, tests that check sample-exact edits against a real-time null sink lose races they should not be exposed to,
# and PipeWire's graph (no real-time priority in a container) drops out. They run as a second phase, one test at a
# time, then the timing suite alone.
server_suites="QueuePlayerTests.PulseAudioTests|QueuePlayerTests.ServerRestartTests"
server_suites+="|QueuePlayerTests.RenderPathAuditTests"
server_suites+="|playerctlTests.PlayerctlDaemonTests/pulseAudioEndToEnd"
server_suites+="|playerctlTests.PlayerctlDaemonTests/serverAbsentAtStart"
# Hundreds of playerctl processes, Debian's and ours: as much load as a server.
server_suites+="|playerctlTests.TemplateParityTests"
# Sample-exact edits of audio decoded ahead, on a real-time null sink: beside nothing else, they show the behaviour
# and not the load.
server_suites+="|QueuePlayerTests.QueueEditTests"
# Snapcast's server and two clients, each client into its own PulseAudio server, in real time.
server_suites+="|QueuePlayerTests.SnapcastTests|playerctlTests.SnapcastPluginTests"
# The soak renders as fast as it can on both cores: beside the real-time suites (and 10x slower under
# ThreadSanitizer) it starved them of the CPU their timing needs.
server_suites+="|QueuePlayerTests.SoakTests"
# The resampler's figures compute and resample seconds of tones, for seconds on a core under the sanitizers: beside
# them, under AddressSanitizer, a boundary observer of a real-time skip test was called over a second late (a CI run).
server_suites+="|QueuePlayerTests.ResamplerRecipeTests"
# The null sink's tick lateness is measured against the clock (98% of the ticks within 3 ms): beside the parallel
# suites it measures their load.
server_suites+="|QueuePlayerTests.NullSinkClockTests"
# Stream titles told as they are heard, on a real-time null sink: beside the parallel suites the event thread posts
# late by their load (both titles were read at 2.27 s in one run, where they are heard at 0.63 and 1.96 s).
server_suites+="|QueuePlayerTests.ICYMetadataTests/toldWhenHeard"
# Holds every thread of Swift's shared pool while a remote item plays: beside the parallel suites it would stall their
# tasks, and they would take threads it means to hold.
server_suites+="|QueuePlayerTests.RemoteItemTests/downloadsDoNotNeedTheSharedPool"
# Skips and seeks fired by a boundary observer on a global queue, into 1.5 s items on a real-time sink: under
# AddressSanitizer beside the parallel suites, the observer of "advancing" was called after its item had ended (two
# fresh-clone CI runs).
server_suites+="|QueuePlayerTests.SkipAndSeekTests"
# The deadlock checks keep a core busy (transitions posted without pause, hundreds of cancellations each on threads of
# their own): beside them, under ThreadSanitizer, timing tests of the engine lost their races (a CI run).
server_suites+="|QueuePlayerTests.ApplicationTests/cancelledStreamConsumer"
server_suites+="|QueuePlayerServiceTests.SubscriptionTests/cancelledSubscriberIsLetGo"

# Runs a `swift test` command line. When it fails, the issues it recorded are printed again at the end: a log that
# keeps only the tail of a long run (as CI's record does) then still shows which test failed and why.
run_tests() {
    local log status
    log=$(mktemp)
    { status=0; "$@" 2>&1 || status=$?; echo "$status" > "$log.status"; } | tee "$log"
    status=$(< "$log.status")
    if [[ $status -ne 0 ]]; then
        echo "== failed (exit $status): $*"
        echo "== the issues recorded above, repeated:"
        awk '/recorded an issue|[Ff]atal error|error: |unexpected signal/ { show = 1 } /^(◇|✔|➜)/ { show = 0 } show' \
            "$log" | head -n 150
    fi
    rm -f "$log" "$log.status"
    return "$status"
}
