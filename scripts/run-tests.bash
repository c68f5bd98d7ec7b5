# Sourced by scripts/test and scripts/sanitize: runs `swift test` in tiers. Every suite names its tier in the code
# (`.tier(.deterministic)`, `.servers`, `.alone`: Tests/TestTiers/TestTier.swift), and QUEUEPLAYER_TEST_TIERS selects
# which run; a test of another tier is skipped, and those lines are left out of the output.
# shellcheck shell=bash

# Runs a `swift test` command line with QUEUEPLAYER_TEST_TIERS set to its first argument. When it fails, the issues
# it recorded are printed again at the end: a log that keeps only the tail of a long run (as CI's record does) then
# still shows which test failed and why.
run_tests() {
    local tiers=$1 log status
    shift
    log=$(mktemp)
    {
        status=0
        QUEUEPLAYER_TEST_TIERS=$tiers "$@" 2>&1 || status=$?
        echo "$status" > "$log.status"
    } | { grep --line-buffered -v "not in this run's test tiers" || true; } | tee "$log"
    status=$(< "$log.status")
    if [[ $status -ne 0 ]]; then
        echo "== failed (exit $status): QUEUEPLAYER_TEST_TIERS=$tiers $*"
        echo "== the issues recorded above, repeated:"
        awk '/recorded an issue|[Ff]atal error|error: |unexpected signal/ { show = 1 } /^(◇|✔|➜)/ { show = 0 } show' \
            "$log" | head -n 150
    fi
    rm -f "$log" "$log.status"
    return "$status"
}

# The deterministic and servers tiers in parallel, then the tests that need the machine to themselves, one at a time.
run_tiers() {
    run_tests deterministic,servers "$@"
    run_tests alone "$@" --no-parallel
}
