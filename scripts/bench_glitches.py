#!/usr/bin/env python3
"""Frames lost or inserted while playing: QueuePlayer's daemon, mpg123 and mpv play the same item into the same
output, quiet and with both cores kept busy by two CPU hogs at normal priority, and what the output played (the null
sink's monitor) is walked against mpg123's decode of the item.

Usage: scripts/bench_glitches.py [--runs N] [--seconds S] [--servers pulseaudio,pipewire,snapcast]
                                 [--load quiet,busy,stalls]
                                 [--players queueplayer,queueplayer-normal-priority,mpg123,mpv] [--native]

Outputs: PulseAudio (scripts/pulse-server), PipeWire's pipewire-pulse (scripts/pipewire-server), both through their
PulseAudio protocol, and Snapcast (a private snapserver with a tcp source; one snapclient into a PulseAudio null
sink). mpg123 and mpv feed Snapcast as its documentation has players do it, raw PCM into the source (here over its
tcp socket, which paces them). A snapclient keeps time by inserting or dropping single frames now and then: those
are counted apart (`corrections`), and only steps of more than CORRECTION_FRAMES count as glitches. Snapserver's own
timeline restarts ("onResync" in its log, when it reads late) are counted for each run.

The `stalls` load (root only) stands for the host taking the CPUs away: the script, the server and every player it
starts are frozen together (a cgroup-v1 freezer) for 20 to 80 ms every 0.25 to 0.75 s; each run reports how many
stalls it saw.

scripts/bench runs it with --runs 3; the figures in docs/testing.md and BENCHMARKS.md come from this script."""

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import wave

import numpy

from bench_snapcast import Snapserver  # scripts/bench_snapcast.py
from bench_targets import check  # scripts/bench_targets.py

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DAEMON = os.path.join(ROOT, ".build", "release", "queueplayerd")
RATE = 44100
FRAME = 4
# A step of at most this many frames inside sound is a Snapcast client's clock correction, not a dropout.
CORRECTION_FRAMES = 8
PROBE = 64
# mpv as it plays into a sound server, at 16 bits as the others do, so that its own decode is the reference.
MPV = ["mpv", "--really-quiet", "--no-video", "--no-config", "--audio-format=s16", "--audio-samplerate=44100"]
# What a player feeding Snapcast through a pipe or socket sends before the first frames and after the last, as the
# daemon does: a client starting a stream skips into its first chunks, and drops its last partial read.
RUNOUT = bytes(RATE // 5 * FRAME)


def read_wav(path):
    with wave.open(path) as file:
        return numpy.frombuffer(file.readframes(file.getnframes()), dtype="<i2").reshape(-1, 2)


def make_item(folder, seconds):
    """A stereo item of music-like sound (plucked notes over a sweep, no digital silence) and what each player's own
    decoder makes of it (mpv decodes with libavcodec, whose samples differ from libmpg123's in the last bits)."""
    item = os.path.join(folder, f"glitch-{seconds}s.mp3")
    wav = item + ".wav"
    subprocess.run(["sox", "-q", "-r", str(RATE), "-c", "2", "-n", wav, "synth", str(seconds), "sine", "110-1760",
                    "pluck", "C4", "gain", "-n", "-6"], check=True)
    subprocess.run(["lame", "--quiet", "-b", "192", wav, item], check=True)
    mpg123 = os.path.join(folder, "reference-mpg123.wav")
    subprocess.run(["mpg123", "-q", "-e", "s16", "-w", mpg123, item], check=True)
    references = {"queueplayer": read_wav(mpg123), "mpg123": read_wav(mpg123)}
    if shutil.which("mpv"):
        mpv = os.path.join(folder, "reference-mpv.raw")
        subprocess.run(MPV + ["--ao=pcm", f"--ao-pcm-file={mpv}", "--ao-pcm-waveheader=no", item], check=True)
        references["mpv"] = numpy.fromfile(mpv, dtype="<i2").reshape(-1, 2)
    return item, references


class Recording:
    """parec on the monitor of `sink` at `address`, until finish()."""

    def __init__(self, address, sink="queueplayer"):
        self.process = subprocess.Popen(
            ["parec", "--server", address, "-d", f"{sink}.monitor", "--raw", "--format=s16le", f"--rate={RATE}",
             "--channels=2", "--latency-msec=20"], stdout=subprocess.PIPE)
        self.chunks = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        while data := os.read(self.process.stdout.fileno(), 65536):
            self.chunks.append(data)

    def finish(self, silent_seconds=0.5, limit_seconds=30):
        """Stops once the sound has started and been followed by `silent_seconds` of silence (a player that wrote
        ahead into a socket is still heard for a while after it exits), or after `limit_seconds`."""
        deadline = time.monotonic() + limit_seconds
        while time.monotonic() < deadline:
            data = b"".join(self.chunks)
            frames = numpy.frombuffer(data[:len(data) // FRAME * FRAME], dtype="<i2").reshape(-1, 2)
            sounding = numpy.flatnonzero(numpy.any(frames != 0, axis=1))
            if len(sounding) and len(frames) - sounding[-1] > RATE * silent_seconds:
                break
            time.sleep(0.1)
        self.process.terminate()
        self.thread.join()
        self.process.wait()
        data = b"".join(self.chunks)
        return numpy.frombuffer(data[:len(data) // FRAME * FRAME], dtype="<i2").reshape(-1, 2)


class NativeRecording:
    """pw-record on the null sink's monitor through PipeWire's own protocol (not pipewire-pulse), until finish(): a
    second ear, to tell a quantum the graph lost (both hear it) from one pipewire-pulse lost on its way to parec."""

    def __init__(self, folder):
        self.path = os.path.join(folder, "native.wav")
        self.process = subprocess.Popen(
            ["pw-record", "-R", os.path.join(folder, "runtime", "pipewire-0"), "--target", "queueplayer",
             "-P", "{ stream.capture.sink = true }", "--rate", str(RATE), "--channels", "2", "--format", "s16",
             "--latency", "20ms", self.path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def finish(self):
        self.process.send_signal(signal.SIGINT)
        self.process.wait()
        return read_wav(self.path)


class Stalls:
    """Freezes this process and all it starts (moved into a freezer cgroup of their own) now and then, from a helper
    outside the group, as the host's steal stops a whole machine: see the module's doc."""

    FREEZER = "/sys/fs/cgroup/freezer"
    HELPER = """
import os, random, signal, sys, time
group, counter = sys.argv[1], sys.argv[2]
with open(os.path.join(os.path.dirname(group), "cgroup.procs"), "w") as root:
    root.write(str(os.getpid()))
def freeze(state):
    with open(os.path.join(group, "freezer.state"), "w") as file:
        file.write(state)
def stop(*_):
    freeze("THAWED")
    sys.exit(0)
signal.signal(signal.SIGTERM, stop)
stalls = 0
while True:
    time.sleep(random.uniform(0.25, 0.75))
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTERM])
    freeze("FROZEN")
    time.sleep(random.uniform(0.02, 0.08))
    freeze("THAWED")
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM])
    stalls += 1
    with open(counter, "w") as file:
        file.write(str(stalls))
"""

    def __init__(self, work):
        self.group = os.path.join(self.FREEZER, f"queueplayer-stalls-{os.getpid()}")
        os.makedirs(self.group, exist_ok=True)
        with open(os.path.join(self.group, "cgroup.procs"), "w") as procs:
            procs.write(str(os.getpid()))
        self.counter = os.path.join(work, "stalls")
        self.helper = None

    def start(self):
        with open(self.counter, "w") as file:
            file.write("0")
        self.helper = subprocess.Popen([sys.executable, "-c", self.HELPER, self.group, self.counter])

    def count(self):
        with open(self.counter) as file:
            return int(file.read() or 0)

    def stop(self):
        if self.helper:
            self.helper.terminate()
            self.helper.wait()
            self.helper = None

    def close(self):
        self.stop()
        with open(os.path.join(self.FREEZER, "cgroup.procs"), "w") as procs:
            procs.write(str(os.getpid()))


def find_block(block, reference, low, high):
    """The first frame in reference[low:high] where `block` starts exactly, or None."""
    low, high = max(0, low), min(len(reference) - len(block), high)
    if high <= low:
        return None
    window = reference[low:high + len(block)]
    candidates = numpy.flatnonzero((window[:high - low, 0] == block[0, 0]) & (window[:high - low, 1] == block[0, 1]))
    for candidate in candidates:
        if numpy.array_equal(window[candidate:candidate + len(block)], block):
            return low + int(candidate)
    return None


def walk(heard, reference):
    """How `heard` holds `reference` from their first sounding frames: a list of steps, each a dict with the
    reference frame it came at, `inserted` (frames heard that are not the reference: silence or other) and `lost`
    (reference frames skipped; negative when heard twice), and whether the end was reached."""
    sounding = numpy.flatnonzero(numpy.any(heard != 0, axis=1))
    if len(sounding) == 0:
        return None
    h = int(sounding[0])
    r = int(numpy.flatnonzero(numpy.any(reference != 0, axis=1))[0])
    steps = []
    while r < len(reference) and h < len(heard):
        count = min(len(reference) - r, len(heard) - h)
        differing = numpy.flatnonzero(numpy.any(heard[h:h + count] != reference[r:r + count], axis=1))
        if len(differing) == 0:
            r, h = r + count, h + count
            break
        r, h = r + int(differing[0]), h + int(differing[0])
        # What was heard instead: silence, or a few frames of other sound, then the reference again somewhere.
        resumed = None
        limit = min(len(heard) - PROBE, h + RATE * 2)
        probe_at = h
        while probe_at <= limit:
            found = find_block(heard[probe_at:probe_at + PROBE], reference, r - RATE, r + RATE * 2)
            if found is not None:
                resumed = (probe_at, found)
                break
            # Skip silence in one go; step over other sound a frame at a time for a correction, faster after.
            silent = numpy.flatnonzero(numpy.any(heard[probe_at:limit + 1] != 0, axis=1))
            if not heard[probe_at].any() and len(silent):
                probe_at += int(silent[0])
            else:
                probe_at += 1 if probe_at - h < CORRECTION_FRAMES else PROBE // 4
        if resumed is None:
            # What follows is not the reference: sound counts as inserted, trailing silence as nothing.
            other = int(numpy.count_nonzero(numpy.any(heard[h:] != 0, axis=1)))
            steps.append({"at": r, "inserted": other, "lost": len(reference) - r, "unmatched": True})
            return steps, False
        steps.append({"at": r, "inserted": resumed[0] - h, "lost": resumed[1] - r})
        h, r = resumed
    if r < len(reference):
        steps.append({"at": r, "inserted": 0, "lost": len(reference) - r, "truncated": True})
    return steps, r >= len(reference)


def summarize(steps):
    corrections = [s for s in steps if s["inserted"] <= CORRECTION_FRAMES and abs(s["lost"]) <= CORRECTION_FRAMES]
    glitches = [s for s in steps if s not in corrections]
    return {
        "steps": [[s["at"], s["inserted"], s["lost"]] for s in glitches],
        "glitches": len(glitches),
        "frames": sum(s["inserted"] + abs(s["lost"]) for s in glitches),
        "lost": sum(max(s["lost"], 0) for s in glitches),
        "corrections": len(corrections),
        "largest": max((s["inserted"] + abs(s["lost"]) for s in glitches), default=0),
    }


def feed_snapcast(decoder, port):
    """Runs `decoder` (raw s16le stereo on its standard output) into the tcp source at `port`, paced by it."""
    process = subprocess.Popen(decoder, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    with socket.create_connection(("127.0.0.1", port)) as connection:
        connection.sendall(RUNOUT)
        while data := process.stdout.read(RATE // 50 * FRAME):
            connection.sendall(data)
        connection.sendall(RUNOUT)
    process.wait()


# The daemon with its real-time request refused (no CAP_SYS_NICE, RLIMIT_RTPRIO 0), as for a user without the limit.
WITHOUT_REAL_TIME = ["prlimit", "--rtprio=0:0", "setpriv", "--bounding-set", "-sys_nice", "--inh-caps", "-sys_nice"]


def play(player, server, address, item, snapcast, state):
    env = dict(os.environ, PULSE_SERVER=address)
    daemon = [DAEMON] if player == "queueplayer" else WITHOUT_REAL_TIME + [DAEMON]
    if player == "queueplayer-normal-priority":
        player = "queueplayer"
    if server == "snapcast":
        if player == "queueplayer":
            subprocess.run(daemon + snapcast.output() + ["--state-file", state, "--exit-when-empty", item],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        elif player == "mpg123":
            feed_snapcast(["mpg123", "-q", "-e", "s16", "-s", item], snapcast.source_port)
        else:
            feed_snapcast(MPV + ["--ao=pcm", "--ao-pcm-file=/dev/stdout", "--ao-pcm-waveheader=no", item],
                          snapcast.source_port)
        return
    command = {
        "queueplayer": daemon + ["--server", address, "--state-file", state, "--exit-when-empty", item],
        "mpg123": ["mpg123", "-q", "-o", "pulse", item],
        "mpv": MPV + ["--ao=pulse", item],
    }[player]
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def start_server(server, folder):
    script = "pipewire-server" if server == "pipewire" else "pulse-server"
    path = os.path.join(ROOT, "scripts", script)
    subprocess.run([path, "stop", folder], check=False, capture_output=True)
    started = subprocess.run([path, "start", folder], capture_output=True, text=True)
    if started.returncode != 0:
        log = os.path.join(folder, "server.log")
        tail = open(log, errors="replace").read()[-2000:] if os.path.exists(log) else "(no server.log)"
        sys.exit(f"bench: scripts/{script} start {folder} failed: {started.stderr.strip()}\n{tail}")
    return started.stdout.strip()


def stop_server(server, folder):
    script = "pipewire-server" if server == "pipewire" else "pulse-server"
    subprocess.run([os.path.join(ROOT, "scripts", script), "stop", folder], check=False, capture_output=True)


def measure(servers, loads, players, runs, seconds, work, native=False):
    item, references = make_item(work, seconds)
    results = {}
    stalls = Stalls(work) if "stalls" in loads else None
    for server in servers:
        folder = os.path.join(work, f"server-{server}")
        address = start_server("pulseaudio" if server == "snapcast" else server, folder)
        for load in loads:
            hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(2)] if load == "busy" else []
            if load == "stalls":
                stalls.start()
            try:
                for run in range(runs):
                    for player in players:
                        snapcast = (Snapserver(tempfile.mkdtemp(dir=work), address, logs=True)
                                    if server == "snapcast" else None)
                        recording = Recording(address)
                        second = NativeRecording(folder) if native and server == "pipewire" else None
                        state = os.path.join(work, "state.sqlite")
                        if os.path.exists(state):
                            os.remove(state)
                        stalled = stalls.count() if load == "stalls" else None
                        play(player, server, address, item, snapcast, state)
                        heard = recording.finish()
                        if stalled is not None:
                            stalled = stalls.count() - stalled
                        heard_natively = second.finish() if second else None
                        reference = references[player.split("-")[0]]
                        walked = walk(heard, reference)
                        if walked is None:
                            outcome = {"glitches": 1, "frames": len(reference), "lost": len(reference),
                                       "corrections": 0, "largest": len(reference), "nothing": True}
                        else:
                            outcome = summarize(walked[0])
                            outcome["complete"] = walked[1]
                        if heard_natively is not None:
                            walked = walk(heard_natively, reference)
                            outcome["native"] = summarize(walked[0]) if walked else "nothing"
                        if stalled is not None:
                            outcome["stalls"] = stalled
                        if snapcast:
                            outcome["resyncs"] = snapcast.resyncs()
                            snapcast.stop()
                        results.setdefault((server, load, player), []).append(outcome)
                        print(json.dumps({"server": server, "load": load, "player": player, "run": run, **outcome}),
                              file=sys.stderr, flush=True)
            finally:
                for hog in hogs:
                    hog.kill()
                    hog.wait()
                if stalls:
                    stalls.stop()
        stop_server("pulseaudio" if server == "snapcast" else server, folder)
    if stalls:
        stalls.close()
    return results


def report_lines(results, seconds):
    lines = []
    for (server, load, player), outcomes in results.items():
        frames = [o["frames"] for o in outcomes]
        with_glitch = sum(o["glitches"] > 0 for o in outcomes)
        line = (f"  {server:10} {load:5} {player:27} runs with a glitch {with_glitch}/{len(outcomes)}, "
                f"frames lost or inserted: median {statistics.median(frames):.0f}, max {max(frames)}, "
                f"lost in all {sum(o.get('lost', 0) for o in outcomes)}, "
                f"glitches in all {sum(o['glitches'] for o in outcomes)}")
        natives = [o["native"] for o in outcomes if isinstance(o.get("native"), dict)]
        if natives:
            line += (f"; recorded by pw-record instead: runs with a glitch "
                     f"{sum(n['glitches'] > 0 for n in natives)}/{len(natives)}, "
                     f"glitches in all {sum(n['glitches'] for n in natives)}")
        if load == "stalls":
            line += f", stalls {sum(o.get('stalls', 0) for o in outcomes)}"
        if server == "snapcast":
            line += (f", client corrections {sum(o['corrections'] for o in outcomes)}, "
                     f"snapserver resyncs {sum(o.get('resyncs', 0) for o in outcomes)}")
        lines.append(line)
    return [f"frames lost or inserted playing a {seconds} s item (two CPU hogs at normal priority when busy):"] + lines


def report(runs, seconds=10, servers=("pulseaudio", "pipewire", "snapcast"), loads=("quiet", "busy"),
           players=("queueplayer", "mpg123", "mpv"), native=False):
    """Prints the section for scripts/bench, and records its target: on every output, with both cores busy, the
    daemon loses no more frames of the item than mpg123 does (none where mpg123 loses none)."""
    players = [p for p in players if shutil.which(p) or p.startswith("queueplayer")]
    work = tempfile.mkdtemp(prefix="queueplayer-bench-glitches-")
    try:
        results = measure(servers, loads, players, runs, seconds, work, native)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("\n".join(report_lines(results, seconds)))
    for server in servers:
        ours, theirs = results.get((server, "busy", "queueplayer")), results.get((server, "busy", "mpg123"))
        if ours and theirs:
            lost = (sum(o.get("lost", 0) for o in ours), sum(o.get("lost", 0) for o in theirs))
            check(f"frames lost, both cores busy, {server}", f"{lost[0]} (mpg123 {lost[1]})", "<= mpg123's",
                  lost[0] <= lost[1])
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--servers", default="pulseaudio,pipewire,snapcast")
    parser.add_argument("--load", default="quiet,busy")
    parser.add_argument("--players", default="queueplayer,mpg123,mpv")
    parser.add_argument("--native", action="store_true",
                        help="on PipeWire, also record the monitor with pw-record (native protocol) and walk that")
    arguments = parser.parse_args()
    if not os.path.exists(DAEMON):
        sys.exit("bench_glitches: build the daemon first (scripts/build-release)")
    for variable, folder in (("XDG_RUNTIME_DIR", "runtime"), ("XDG_STATE_HOME", "state"),
                             ("XDG_CONFIG_HOME", "config")):
        path = os.path.join(ROOT, ".bench", folder)
        os.makedirs(path, mode=0o700, exist_ok=True)
        os.environ.setdefault(variable, path)
    report(arguments.runs, arguments.seconds, arguments.servers.split(","), arguments.load.split(","),
           arguments.players.split(","), arguments.native)


if __name__ == "__main__":
    main()
