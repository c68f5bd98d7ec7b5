# Sourced by scripts/test and scripts/sanitize: runs `swift test` in tiers. Every suite names its tier in the code
# (`.tier(.deterministic)`, `.servers`, `.alone`: Tests/TestTiers/TestTier.swift), and QUEUEPLAYER_TEST_TIERS selects
# which run; a test of another tier is skipped, and those lines are left out of the output.
# shellcheck shell=bash

# The longest a `swift test` run of one tier may take, in seconds: about 2.5 times the longest measured (the alone
# tier, 350 s on 2 cores). A test that waits forever then ends the run, named, instead of CI's time.
QUEUEPLAYER_TEST_DEADLINE=${QUEUEPLAYER_TEST_DEADLINE:-900}

# A crash prints every thread's backtrace with symbol names and no line numbers: looking up line numbers in the test
# binary's debug information took the backtracer past the tier's deadline.
export SWIFT_BACKTRACE=${SWIFT_BACKTRACE:-enable=yes,interactive=no,symbolicate=fast}

# Runs a `swift test` command line with QUEUEPLAYER_TEST_TIERS set to its first argument, killed with everything it
# started (its process group) after QUEUEPLAYER_TEST_DEADLINE seconds. When it fails, the issues it recorded are
# printed again at the end, and after the deadline the tests still running: a log that keeps only the tail of a long
# run (as CI's record does) then still shows which test failed and why.
run_tests() {
    local tiers=$1 log status
    shift
    log=$(mktemp)
    {
        status=0
        QUEUEPLAYER_TEST_TIERS=$tiers timeout --signal=KILL "$QUEUEPLAYER_TEST_DEADLINE" "$@" 2>&1 || status=$?
        echo "$status" > "$log.status"
    } | { grep --line-buffered -v "not in this run's test tiers" || true; } | tee "$log"
    status=$(< "$log.status")
    if [[ $status -eq 137 ]]; then
        echo "== killed after QUEUEPLAYER_TEST_DEADLINE=$QUEUEPLAYER_TEST_DEADLINE s; the tests still running then:"
        unfinished_tests "$log"
    fi
    if [[ $status -ne 0 ]]; then
        echo "== failed (exit $status): QUEUEPLAYER_TEST_TIERS=$tiers $*"
        echo "== the issues recorded above, repeated:"
        awk '/recorded an issue|[Ff]atal error|error: |unexpected signal/ { show = 1 } /^(◇|✔|➜)/ { show = 0 } show' \
            "$log" | head -n 150
    fi
    rm -f "$log" "$log.status"
    return "$status"
}

# Prints the tests of Swift Testing's log $1 that started and neither passed nor failed.
unfinished_tests() {
    awk '{ gsub(/\033\[[0-9;]*m/, "") }
        /^◇ Test .* started\.$/ && !/^◇ Test (run|case) / {
            name = $0; sub(/^◇ Test /, "", name); sub(/ started\.$/, "", name); running[name] = 1
        }
        /^(✔|✘) Test .* (passed|failed) after / {
            name = $0; sub(/^(✔|✘) Test /, "", name)
            sub(/( with [0-9]+ test cases?)? (passed|failed) after .*$/, "", name)
            delete running[name]
        }
        END { for (name in running) print "   " name }' "$1"
}

# The deterministic and servers tiers in parallel, then the tests that need the machine to themselves, one at a time.
run_tiers() {
    run_tests deterministic,servers "$@"
    run_tests alone "$@" --no-parallel
}
