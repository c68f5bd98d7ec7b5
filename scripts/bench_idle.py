"""The idle benchmark of scripts/bench: what the shipped daemon costs while it waits, with MPRIS on the session bus
in the environment, the control socket and the state store open. Wake-ups per second of each thread (context
switches, from /proc), CPU ticks and anonymous memory, with an empty queue and paused in the middle of an item; and
what a client verb costs against it: `playerctl status` (ours, over the control socket) beside Debian's
`playerctl -p queueplayer status` (over MPRIS), process start to exit."""

import os
import shutil
import statistics
import subprocess
import time

import bench_memory  # scripts/bench_memory.py
from bench_targets import at_most, check

TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")


def threads(pid):
    """{thread id: (name, context switches so far, nanoseconds on a CPU so far)} for each thread of `pid`. The
    nanoseconds are the scheduler's own account (/proc/.../schedstat), exact where the CPU ticks of /proc/PID/stat
    count whole 10 ms: an idle daemon's few milliseconds a minute show there as 0 or 1 tick, by where the minute
    falls."""
    counts = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/comm") as file:
                name = file.read().strip()
            with open(f"/proc/{pid}/task/{task}/status") as file:
                switches = sum(int(line.split()[1]) for line in file if "ctxt_switches" in line)
            with open(f"/proc/{pid}/task/{task}/schedstat") as file:
                nanoseconds = int(file.read().split()[0])
        except FileNotFoundError:
            continue
        counts[task] = (name, switches, nanoseconds)
    return counts


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as file:
        fields = file.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def measure(pid, seconds):
    """Wake-ups per second by thread, CPU ticks, and milliseconds on a CPU in all, over `seconds` of waiting."""
    before, ticks = threads(pid), cpu_ticks(pid)
    time.sleep(seconds)
    after = threads(pid)
    # By thread id, then summed by name: a libdispatch worker that exits in the window takes its counts with it,
    # and summed by name first, that made a negative rate. What such a thread did in the window is not counted.
    rates, milliseconds = {}, 0.0
    for task, (name, switches, nanoseconds) in after.items():
        _, switches_before, nanoseconds_before = before.get(task, (name, 0, 0))
        rates[name] = rates.get(name, 0) + (switches - switches_before) / seconds
        milliseconds += (nanoseconds - nanoseconds_before) / 1e6
    return rates, cpu_ticks(pid) - ticks, milliseconds


def client_verb_milliseconds(command, env, runs=30):
    """The median wall time of `command` (a client verb), process start to exit, over `runs` runs."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def report(playerctl, server_address, item, seconds=60):
    """Prints the idle figures of a daemon on the session bus: empty queue, then paused; then the client verbs."""
    env = dict(os.environ)
    state = os.path.join(os.environ["XDG_STATE_HOME"], "idle.sqlite")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(state + suffix):
            os.remove(state + suffix)
    daemon = subprocess.Popen([playerctl, "daemon", "--server", server_address, "--state-file", state],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        def control(*verb):
            subprocess.run([playerctl, *verb], check=True, stdout=subprocess.DEVNULL, env=env)

        deadline = time.monotonic() + 10
        while "No players found" in subprocess.run([playerctl, "status"], capture_output=True, text=True,
                                                   env=env).stderr:
            if time.monotonic() > deadline:
                raise SystemExit("bench: the idle daemon did not answer")
            time.sleep(0.05)
        time.sleep(1)
        rows = [("empty queue", *measure(daemon.pid, seconds), bench_memory.rollup(daemon.pid))]
        control("add", item)
        control("play")
        time.sleep(1)
        control("pause")
        time.sleep(1)
        rows.append(("paused", *measure(daemon.pid, seconds), bench_memory.rollup(daemon.pid)))
        verbs = {"ours": [], "Debian's": []}
        for _ in range(3):  # alternated, so that both see the same machine
            verbs["ours"].append(client_verb_milliseconds([playerctl, "status"], env))
            if shutil.which("/usr/bin/playerctl"):
                verbs["Debian's"].append(client_verb_milliseconds(["/usr/bin/playerctl", "-p", "queueplayer",
                                                                   "status"], env))
    finally:
        daemon.terminate()
        daemon.wait()
    print(f"idle daemon (static release build, MPRIS on a session bus, socket and store open), {seconds} s each:")
    for label, rates, ticks, milliseconds, memory in rows:
        woken = ", ".join(f"{name} {rate:.1f}" for name, rate in sorted(rates.items()) if rate > 0) or "none"
        print(f"  {label:12} wake-ups/s {sum(rates.values()):5.1f} ({woken})   CPU ticks {ticks} "
              f"({milliseconds:.1f} ms on a CPU)   "
              f"anonymous {memory['anonymous'] / bench_memory.MIB:.1f} MiB")
        at_most(f"idle ({label}) wake-ups/s", sum(rates.values()), 1, digits=1)
        at_most(f"idle ({label}) CPU ticks over {seconds} s", ticks, 0, digits=0)
    at_most("anonymous memory, idle, empty queue (MiB)", rows[0][4]["anonymous"] / bench_memory.MIB, 4, digits=1)
    print("  target: <= 1 wake-up per second and 0 CPU ticks over 60 s; anonymous memory <= 4 MiB with nothing queued")
    print("  (a CPU tick is the process's CPU time passing a multiple of 10 ms: a few ms read as 0 or 1, by chance)")
    ours = statistics.median(verbs["ours"])
    print(f"a client verb, `status` against the paused daemon, process start to exit (median of 3 x 30 runs):")
    print(f"  playerctl status (ours, control socket)            {ours:6.2f} ms")
    if verbs["Debian's"]:
        theirs = statistics.median(verbs["Debian's"])
        print(f"  /usr/bin/playerctl -p queueplayer status (MPRIS)   {theirs:6.2f} ms")
        print(f"  ratio (ours / Debian's): {ours / theirs:.2f}   (target <= 1)\n")
        check("client verb `status`, start to exit", f"{ours:.1f} vs {theirs:.1f} ms", "<= Debian's playerctl",
              ours <= theirs)
    else:
        print("  (Debian's playerctl is not installed: `scripts/setup` adds it)\n")
