"""The idle benchmark of scripts/bench: what the shipped daemon costs while it waits, with MPRIS on a session bus
of its own, the control socket and the state store open. Wake-ups per second of each thread (context switches,
from /proc) and CPU ticks, with an empty queue and paused in the middle of an item."""

import os
import subprocess
import time

TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")


def threads(pid):
    """{thread name: context switches so far} for each thread of `pid` (threads of one name are summed)."""
    switches = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/comm") as file:
                name = file.read().strip()
            with open(f"/proc/{pid}/task/{task}/status") as file:
                count = sum(int(line.split()[1]) for line in file if "ctxt_switches" in line)
        except FileNotFoundError:
            continue
        switches[name] = switches.get(name, 0) + count
    return switches


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as file:
        fields = file.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def measure(pid, seconds):
    """Wake-ups per second by thread, and CPU ticks, over `seconds` of waiting."""
    before, ticks = threads(pid), cpu_ticks(pid)
    time.sleep(seconds)
    after = threads(pid)
    rates = {name: (after[name] - before.get(name, 0)) / seconds for name in after}
    return rates, cpu_ticks(pid) - ticks


def report(playerctl, server_address, item, seconds=20):
    """Prints the idle figures of a daemon on a private session bus: empty queue, then paused."""
    bus = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    env = dict(os.environ, DBUS_SESSION_BUS_ADDRESS=bus.stdout.readline().strip())
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
        rows = [("empty queue", *measure(daemon.pid, seconds))]
        control("add", item)
        control("play")
        time.sleep(1)
        control("pause")
        time.sleep(1)
        rows.append(("paused", *measure(daemon.pid, seconds)))
    finally:
        daemon.terminate()
        daemon.wait()
        bus.terminate()
        bus.wait()
    print(f"idle daemon (static release build, MPRIS on a session bus, socket and store open), {seconds} s each:")
    for label, rates, ticks in rows:
        busy = ", ".join(f"{name} {rate:.1f}" for name, rate in sorted(rates.items()) if rate > 0) or "none"
        print(f"  {label:12} wake-ups/s {sum(rates.values()):5.1f} ({busy})   CPU ticks {ticks}")
    print("  target: <= 1 wake-up per second and 0 CPU ticks over 60 s\n")
