"""The server-restart benchmark of scripts/bench: the PulseAudio server is stopped while the daemon plays, and
started again a second later. Measured on the monitor: how long after the server answers again the sound is back,
and how far the resumed sound is from where it stopped (frames heard twice, or lost)."""

import os
import statistics
import subprocess
import tempfile
import time
from importlib.machinery import SourceFileLoader

import numpy

from bench_targets import at_most, check

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
audible = SourceFileLoader("audible_time", os.path.join(ROOT, "scripts", "audible-time")).load_module()
RATE = audible.RATE


def find(block, reference):
    """The reference frame where `block` (frames) starts exactly, or None."""
    candidates = numpy.flatnonzero((reference[:len(reference) - len(block), 0] == block[0, 0])
                                   & (reference[:len(reference) - len(block), 1] == block[0, 1]))
    for start in candidates:
        if numpy.array_equal(reference[start:start + len(block)], block):
            return int(start)
    return None


def sounding(samples):
    return numpy.flatnonzero((samples != 0).any(axis=1))


def restart_once(playerctl, server_dir, address, item, reference):
    """(seconds from the server answering to sound, frames from where it stopped to where it resumed)."""
    server = os.path.join(ROOT, "scripts", "pulse-server")
    with tempfile.TemporaryDirectory() as directory:
        before = audible.MonitorRecording(address)
        daemon = subprocess.Popen([playerctl, "daemon", "--server", address, "--exit-when-empty", "--state-file",
                                   os.path.join(directory, "state.sqlite"), item],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(3)
            subprocess.run([server, "stop", server_dir], check=True, stdout=subprocess.DEVNULL)
            heard_before = before.finish()
            time.sleep(1)
            subprocess.run([server, "start", server_dir], check=True, stdout=subprocess.DEVNULL)
            answered = time.monotonic()
            after = audible.MonitorRecording(address)
            time.sleep(2)
            heard_after = after.finish()
            origin, period = after.sink_clock()
        finally:
            daemon.terminate()
            daemon.wait()
    loud_before, loud_after = sounding(heard_before), sounding(heard_after)
    if len(loud_before) == 0 or len(loud_after) == 0:
        return None
    stopped = find(heard_before[loud_before[-1] - 511:loud_before[-1] + 1], reference)
    resumed = find(heard_after[loud_after[0]:loud_after[0] + 512], reference)
    if stopped is None or resumed is None:
        return None
    back = origin + loud_after[0] * period - answered
    return back, resumed - (stopped + 512)


def report(playerctl, server_dir, address, item, reference, runs):
    """Prints the medians over `runs` restarts."""
    results = [restart_once(playerctl, server_dir, address, item, reference) for _ in range(runs)]
    measured = [result for result in results if result is not None]
    print("the PulseAudio server stopped mid-item and started again 1 s later (monitor on both sides):")
    if not measured:
        print("  no restart could be measured (the resumed sound was not found in the item)\n")
        check("server restart measured", "none of the runs", "every run", False)
        return
    backs = [back * 1000 for back, _ in measured]
    shifts = [shift / RATE * 1000 for _, shift in measured]
    print(f"  sound back after the server answers: median {statistics.median(backs):.0f} ms, "
          f"max {max(backs):.0f} ms   (target <= 500 ms)")
    print(f"  resumed from where it stopped: median {statistics.median(shifts):+.1f} ms, "
          f"worst {max(shifts, key=abs):+.1f} ms (negative: heard twice; positive: lost)   (target: within 50 ms)")
    at_most("server restart, sound back (ms)", statistics.median(backs), 500, digits=0)
    at_most("server restart, |worst resume offset| (ms)", abs(max(shifts, key=abs)), 50, digits=1)
    if len(measured) < len(results):
        print(f"  ({len(results) - len(measured)} of {len(results)} runs could not be measured)")
    print()
