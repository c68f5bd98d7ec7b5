"""The Snapcast benchmark of scripts/bench: the daemon feeding Debian's snapserver (a tcp source in server mode, the
pcm codec, at the null sink's rate) with a snapclient playing into the bench's PulseAudio null sink, beside the same
daemon playing into that sink itself, in the same run, on the same item."""

import os
import shutil
import statistics
import subprocess
import tempfile
import time

import json

import bench_control  # scripts/bench_control.py
import bench_network  # scripts/bench_network.py
from bench_targets import at_most

RATE = bench_control.RATE
BUFFER_MS = 1000  # snapserver's default buffer


class Snapserver:
    """A private snapserver on free loopback ports, and one snapclient into the PulseAudio server at `address`.
    Snapserver logs into `folder` (for resyncs()) when `logs`."""

    def __init__(self, folder, address, logs=False):
        self.folder = folder
        self.source_port, stream_port, control_port = (bench_network.free_port() for _ in range(3))
        config = os.path.join(folder, "snapserver.conf")
        self.log = os.path.join(folder, "snapserver.log")
        log_sink = f"file:{self.log}" if logs else "null"
        with open(config, "w") as file:
            file.write(f"[server]\ndatadir = {folder}\n[http]\nenabled = false\n"
                       f"[tcp]\nbind_to_address = 127.0.0.1\nport = {control_port}\n"
                       f"[stream]\nbind_to_address = 127.0.0.1\nport = {stream_port}\n"
                       f"source = tcp://127.0.0.1:{self.source_port}?name=QueuePlayer&mode=server"
                       f"&sampleformat={RATE}:16:2\ncodec = pcm\nbuffer = {BUFFER_MS}\n[logging]\nsink = {log_sink}\n")
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        self.server = subprocess.Popen(["snapserver", "-c", config], **quiet)
        while not bench_network.answers(control_port):
            time.sleep(0.01)
        self.client = subprocess.Popen(
            ["snapclient", "-h", "127.0.0.1", "-p", str(stream_port), "--player", "pulse", "--hostID", "bench",
             "--logsink", "null"], env=dict(os.environ, PULSE_SERVER=address), **quiet)

    def output(self):
        """The daemon's options to play into this server."""
        return ["--sink", "snapcast", "--server", f"127.0.0.1:{self.source_port}", "--sample-rate", str(RATE)]

    def resyncs(self):
        """How often snapserver restarted its timeline because it read late ("onResync" in its log)."""
        with open(self.log, errors="replace") as file:
            return sum("onResync" in line for line in file)

    def stop(self):
        for process in (self.client, self.server):
            process.terminate()
            process.wait()


def report(playerctl, address, item, sweep, runs):
    """Prints the Snapcast section: CPU feeding snapserver beside CPU playing into PulseAudio, pause to silence in the
    room beside the same through PulseAudio (the difference is Snapcast's buffer), and the time reported against what
    the room hears (scripts/audible-time --snapcast, on `sweep`)."""
    if not shutil.which("snapserver") or not shutil.which("snapclient"):
        print("snapcast: snapserver and snapclient are missing; run scripts/setup")
        return
    work = tempfile.mkdtemp(prefix="queueplayer-bench-snapcast-")
    snapserver = Snapserver(work, address)
    state = os.path.join(work, "state.sqlite")
    outputs = {"Snapcast": snapserver.output(), "PulseAudio": ["--server", address]}
    median = statistics.median
    cpu = {name: median([bench_network.cpu_for([playerctl, "daemon"] + output + ["--state-file", state, item],
                                               None, 20) for _ in range(min(runs, 3))])
           for name, output in outputs.items()}
    print("snapcast: CPU playing 20 s: " + ", ".join(f"into {name} {cpu[name]:.3f} s" for name in cpu))
    at_most("CPU feeding Snapcast, / playing into PulseAudio", cpu["Snapcast"] / cpu["PulseAudio"], 1.0, "x")
    silence = {}
    for name, output in outputs.items():
        player = bench_control.Player("queueplayer", item, address, playerctl, work, output=output)
        to_silence, _, _ = bench_control.pause_and_resume(
            player, address, settle=BUFFER_MS / 1000 + 1, cycles=3, paused_for=BUFFER_MS / 1000 + 0.5,
            played_for=BUFFER_MS / 1000 + 0.5)
        silence[name] = median(to_silence)
        player.stop()
    beyond = silence["Snapcast"] - silence["PulseAudio"] - BUFFER_MS
    print(f"  pause to silence (ms, medians): in the room {silence['Snapcast']:.1f}, through PulseAudio "
          f"{silence['PulseAudio']:.1f}; beyond Snapcast's {BUFFER_MS} ms buffer: {beyond:.1f}")
    at_most("pause to silence in the room beyond Snapcast's buffer (ms)", beyond, 20, digits=1)
    snapserver.stop()
    shutil.rmtree(work, ignore_errors=True)
    errors = [json.loads(subprocess.run(
        [os.path.join(os.path.dirname(os.path.abspath(__file__)), "audible-time"), "--server", address,
         "--playerctl", playerctl, "--snapcast", "queueplayer", sweep], check=True, capture_output=True,
        text=True).stdout)["error"] for _ in range(min(runs, 3))]
    medians = sorted(error["median"] for error in errors)
    print(f"  reported minus heard in the room (ms): medians of runs {', '.join(f'{m:.1f}' for m in medians)}; "
          f"p99 {median([error['p99'] for error in errors]):.1f}")
    at_most("reported minus heard in the room, |median| (ms)", abs(median(medians)), 20, digits=1)
