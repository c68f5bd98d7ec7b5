"""The MPD protocol benchmark of scripts/bench: the shipped daemon's MPD listener beside Debian's mpd, on the same
music folder, both playing the same item to a null output. The `status` round trip on one connection (p50, p99);
the delay from one client's change to another, idling client's answer; connect, `ping`, close cycles (descriptors
and memory before and after); 200 idling clients (wake-ups while nothing changes, against none idling); and the
daemon's memory with the listener on and off."""

import os
import shutil
import socket
import subprocess
import tempfile
import time
from statistics import median

import bench_idle  # scripts/bench_idle.py
import bench_memory  # scripts/bench_memory.py
from bench_control import percentile
from bench_targets import at_most, check


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port, process, seconds=10):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and process.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError(f"nothing answered on port {port}")


class Client:
    """One MPD connection: send a command, read its answer to OK or ACK."""

    def __init__(self, port):
        self.socket = socket.create_connection(("127.0.0.1", port))
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.file = self.socket.makefile("rb")
        self.file.readline()

    def send(self, line):
        self.socket.sendall((line + "\n").encode())

    def read(self):
        lines = []
        while True:
            line = self.file.readline().decode()
            lines.append(line)
            if not line or line.startswith("OK") or line.startswith("ACK"):
                return lines

    def ask(self, line):
        self.send(line)
        return self.read()

    def close(self):
        self.file.close()
        self.socket.close()


def round_trips(port, count=2000):
    client = Client(port)
    for _ in range(100):
        client.ask("status")
    times = []
    for _ in range(count):
        started = time.perf_counter()
        client.ask("status")
        times.append((time.perf_counter() - started) * 1000)
    client.close()
    return percentile(times, 0.5), percentile(times, 0.99)


def idle_delays(port, count=200):
    """Milliseconds from a `setvol` sent on one connection to the `changed: mixer` read on another that idles. The
    idler is read first: waiting for the setvol's own reply before it would count that reply's time instead wherever
    the server tells the idler first."""
    idler, actor = Client(port), Client(port)
    delays = []
    for index in range(count):
        idler.send("idle mixer")
        time.sleep(0.005)  # the idle is on its way before the change: what is measured is the change's delivery
        started = time.perf_counter()
        actor.send(f"setvol {50 + index % 2}")
        idler.read()
        delays.append((time.perf_counter() - started) * 1000)
        actor.read()
    idler.close()
    actor.close()
    return percentile(delays, 0.5), percentile(delays, 0.99)


def cpu_seconds(pid):
    """The CPU time all of `pid`'s threads have run, from the scheduler's own count (nanoseconds, not ticks)."""
    tasks = f"/proc/{pid}/task"
    total = 0
    for task in os.listdir(tasks):
        try:
            with open(f"{tasks}/{task}/schedstat") as file:
                total += int(file.read().split()[0])
        except FileNotFoundError:
            pass  # a thread that ended between the listing and the read
    return total / 1e9


def cpu_per_command(port, pid, statuses=5000, changes=2000):
    """Microseconds of the server's CPU for one `status`, and for one `setvol` told to an idling client (with
    whatever the server does after it, such as saving its state), each back to back on loopback. Less noisy than
    the round trips: it counts the work done, not the wait for a CPU."""
    idler, actor = Client(port), Client(port)
    actor.ask("setvol 40")
    started = cpu_seconds(pid)
    for _ in range(statuses):
        actor.ask("status")
    status = (cpu_seconds(pid) - started) / statuses * 1e6
    started = cpu_seconds(pid)
    for index in range(changes):
        idler.send("idle mixer")
        actor.send(f"setvol {50 + index % 2}")
        idler.read()
        actor.read()
    change = (cpu_seconds(pid) - started) / changes * 1e6
    idler.close()
    actor.close()
    return status, change


def descriptors(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def cycles(port, pid, count):
    """Descriptors and resident MiB before and after `count` connect, ping, close cycles."""
    before = (descriptors(pid), bench_memory.rollup(pid)["rss"] / bench_memory.MIB)
    for _ in range(count):
        client = socket.create_connection(("127.0.0.1", port))
        client.recv(64)
        client.sendall(b"ping\n")
        client.recv(64)
        client.close()
    time.sleep(0.5)
    return before, (descriptors(pid), bench_memory.rollup(pid)["rss"] / bench_memory.MIB)


def idle_clients(port, pid, count=200, seconds=10):
    """Wake-ups per second of the whole process, with nothing idling, then with `count` clients idling."""
    quiet = sum(bench_idle.measure(pid, seconds)[0].values())
    clients = [Client(port) for _ in range(count)]
    for client in clients:
        client.send("idle")
    time.sleep(1)
    idling = sum(bench_idle.measure(pid, seconds)[0].values())
    for client in clients:
        client.send("noidle")
        client.read()
        client.close()
    return quiet, idling


def start_mpd(music, work, port):
    os.makedirs(os.path.join(work, "playlists"), exist_ok=True)
    config = os.path.join(work, "mpd.conf")
    with open(config, "w") as file:
        file.write(f'music_directory "{music}"\nplaylist_directory "{work}/playlists"\ndb_file "{work}/database"\n'
                   f'log_file "{work}/log"\nbind_to_address "127.0.0.1"\nport "{port}"\nmax_connections "300"\n'
                   'audio_output {\n type "null"\n name "null"\n mixer_type "software"\n}\n')
    process = subprocess.Popen(["mpd", "--no-daemon", config], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_port(port, process)
    subprocess.run(["mpc", "--port", str(port), "update", "--wait"], check=True, stdout=subprocess.DEVNULL)
    return process


def start_daemon(daemon, music, work, port):
    arguments = [daemon, "--sink", "null", "--pause", "--socket", os.path.join(work, "control.sock"),
                 "--state-file", os.path.join(work, "state.sqlite")]
    if port:
        arguments += ["--mpd", f"127.0.0.1:{port}", "--music-directory", music, "--mpd-max-connections", "300"]
    process = subprocess.Popen(arguments, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if port:
        wait_for_port(port, process)
    return process


def report(daemon, item, runs, cycle_count=100_000):
    if not shutil.which("mpd"):
        print("MPD protocol: Debian's mpd is not installed (scripts/setup adds it)")
        return
    work = tempfile.mkdtemp(prefix="queueplayer-bench-mpd-")
    music = os.path.join(work, "music")
    os.makedirs(music)
    shutil.copy(item, os.path.join(music, "item.mp3"))
    ours_port, theirs_port = free_port(), free_port()
    theirs = start_mpd(music, os.path.join(work, "mpd"), theirs_port)
    os.makedirs(os.path.join(work, "ours"))
    ours = start_daemon(daemon, music, os.path.join(work, "ours"), ours_port)
    try:
        for port in (ours_port, theirs_port):
            client = Client(port)
            for line in ("clear", "add item.mp3", "play"):
                client.ask(line)
            client.close()
        print("MPD protocol, the daemon beside Debian's mpd (both playing the same item to a null output; "
              f"medians of {runs} runs):")
        # The servers take turns, run by run: this machine's speed drifts by half over minutes, which measuring one
        # server's runs and then the other's would count as a difference between them.
        servers = (("queueplayer", ours_port, ours.pid), ("mpd", theirs_port, theirs.pid))
        trips, delays, costs = ({name: [] for name, *_ in servers} for _ in range(3))
        for _ in range(runs):
            for name, port, pid in servers:
                trips[name].append(round_trips(port))
                delays[name].append(idle_delays(port))
                costs[name].append(cpu_per_command(port, pid))
        figures = {}
        for name, *_ in servers:
            figures[name] = {
                "status p50": median(t[0] for t in trips[name]),
                "status p99": median(t[1] for t in trips[name]),
                "idle p50": median(d[0] for d in delays[name]),
                "idle p99": median(d[1] for d in delays[name]),
                "cpu status": median(c[0] for c in costs[name]),
                "cpu change": median(c[1] for c in costs[name]),
            }
        for key in ("status p50", "status p99", "idle p50", "idle p99"):
            print(f"  {key:11} ours {figures['queueplayer'][key]:7.3f} ms   mpd {figures['mpd'][key]:7.3f} ms")
        for key, what in (("cpu status", "a `status`"), ("cpu change", "a `setvol` told to an idler")):
            print(f"  CPU for {what}: ours {figures['queueplayer'][key]:.1f} µs, mpd {figures['mpd'][key]:.1f} µs "
                  f"({figures['queueplayer'][key] / figures['mpd'][key]:.2f}×)")
        check("MPD `status` round trip p99, against mpd's", f"{figures['queueplayer']['status p99']:.3f} ms",
              f"<= mpd's {figures['mpd']['status p99']:.3f} ms",
              figures["queueplayer"]["status p99"] <= figures["mpd"]["status p99"])
        check("MPD change to an idling client, p50, against mpd's", f"{figures['queueplayer']['idle p50']:.3f} ms",
              f"<= mpd's {figures['mpd']['idle p50']:.3f} ms",
              figures["queueplayer"]["idle p50"] <= figures["mpd"]["idle p50"])

        for name, port, pid in (("queueplayer", ours_port, ours.pid), ("mpd", theirs_port, theirs.pid)):
            started = time.perf_counter()
            (fds_before, rss_before), (fds_after, rss_after) = cycles(port, pid, cycle_count)
            print(f"  {cycle_count:,} connect, ping, close ({name}, {time.perf_counter() - started:.0f} s): "
                  f"descriptors {fds_before} -> {fds_after}, resident {rss_before:.1f} -> {rss_after:.1f} MiB")
            if name == "queueplayer":
                check(f"MPD: {cycle_count:,} connections, descriptors and memory", f"{fds_after - fds_before} fds, "
                      f"{rss_after - rss_before:+.1f} MiB", "no growth (< 1 MiB)",
                      fds_after <= fds_before and rss_after - rss_before < 1)
        for client in (Client(ours_port), Client(theirs_port)):
            client.ask("pause 1")
            client.close()
        quiet, idling = idle_clients(ours_port, ours.pid)
        their_quiet, their_idling = idle_clients(theirs_port, theirs.pid)
        print(f"  wake-ups/s while paused: ours {quiet:.1f}, with 200 clients idling {idling:.1f}; "
              f"mpd {their_quiet:.1f}, {their_idling:.1f}")
        at_most("MPD: wake-ups/s added by 200 idling clients", max(0.0, idling - quiet), 0.5)
    finally:
        ours.terminate()
        theirs.terminate()
        ours.wait()
        theirs.wait()

    off_work = os.path.join(work, "off")
    os.makedirs(off_work)
    on_work = os.path.join(work, "on")
    os.makedirs(on_work)
    memory = {}
    for name, folder, port in (("off", off_work, None), ("on", on_work, free_port())):
        process = start_daemon(daemon, music, folder, port)
        time.sleep(2)
        memory[name] = bench_memory.rollup(process.pid)
        process.terminate()
        process.wait()
    print(f"  the daemon's memory, MPD listener off and on: PSS {memory['off']['pss'] / bench_memory.MIB:.1f} and "
          f"{memory['on']['pss'] / bench_memory.MIB:.1f} MiB, anonymous "
          f"{memory['off']['anonymous'] / bench_memory.MIB:.1f} and {memory['on']['anonymous'] / bench_memory.MIB:.1f}"
          " MiB")
    shutil.rmtree(work, ignore_errors=True)
