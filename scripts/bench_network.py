"""The network benchmark of scripts/bench: QueuePlayer, mpg123 and mpv on the same URLs, in the same run, on
loopback. A podcast episode comes from a small HTTP server with byte ranges (which can drop a connection once,
mid-file); a live stream from Debian's icecast2, fed by a source paced in real time (or faster, where a figure needs
more stream than wall time). Sound is measured on the null sink's monitor."""

import base64
import http.server
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import tempfile
import threading
import time

import numpy

import bench_control  # scripts/bench_control.py
from bench_targets import at_most, check

audible = bench_control.audible
RATE = audible.RATE
BYTES_PER_SECOND = 192_000 // 8  # the bench's items are 192 kbps CBR


class FileServer:
    """Serves `files` ({path: bytes}) on 127.0.0.1 with byte ranges. `drops` ({path: bytes}) cuts the next answer
    for a path after that many body bytes and closes the connection, once."""

    def __init__(self, files):
        self.files = files
        self.drops = {}
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *arguments):
                pass

            def do_GET(self):
                body = server.files.get(self.path)
                if body is None:
                    self.send_error(404)
                    return
                asked = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range", ""))
                first = int(asked[1]) if asked and int(asked[1]) < len(body) else 0
                self.send_response(206 if first else 200)
                if first:
                    self.send_header("Content-Range", f"bytes {first}-{len(body) - 1}/{len(body)}")
                for name, value in (("Content-Type", "audio/mpeg"), ("Accept-Ranges", "bytes"),
                                    ("Content-Length", str(len(body) - first)), ("Connection", "close")):
                    self.send_header(name, value)
                self.end_headers()
                cut = server.drops.pop(self.path, None)
                self.wfile.write(body[first:] if cut is None else body[first:first + cut])
                self.close_connection = True

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, path):
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def stop(self):
        self.server.shutdown()


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def answers(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


class Icecast:
    """Debian's icecast2 on a free port of 127.0.0.1, as `nobody`, its files in `folder`; start() and stop() may be
    called again (a server restart) on the same port."""
    PASSWORD = "queueplayer-bench"

    def __init__(self, folder):
        self.port = free_port()
        os.chmod(folder, 0o777)
        self.config = os.path.join(folder, "icecast.xml")
        with open(self.config, "w") as file:
            file.write(f"""<icecast>
  <limits><clients>20</clients><sources>4</sources><source-timeout>5</source-timeout>
    <queue-size>1048576</queue-size><burst-size>65536</burst-size></limits>
  <authentication><source-password>{self.PASSWORD}</source-password>
    <admin-user>admin</admin-user><admin-password>{self.PASSWORD}</admin-password></authentication>
  <hostname>127.0.0.1</hostname>
  <listen-socket><port>{self.port}</port><bind-address>127.0.0.1</bind-address></listen-socket>
  <paths><basedir>/usr/share/icecast2</basedir><logdir>{folder}</logdir>
    <webroot>/usr/share/icecast2/web</webroot><adminroot>/usr/share/icecast2/admin</adminroot></paths>
  <logging><accesslog>access.log</accesslog><errorlog>error.log</errorlog><loglevel>2</loglevel></logging>
  <security><chroot>0</chroot><changeowner><user>nobody</user><group>nogroup</group></changeowner></security>
</icecast>
""")
        self.process = None
        self.crashes = 0

    def start(self):
        """Starts the server; returns the monotonic time its port first answered."""
        self.process = subprocess.Popen(["/usr/bin/icecast2", "-c", self.config], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 5
        while not answers(self.port):
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise SystemExit(f"bench: icecast2 did not start on port {self.port}")
            time.sleep(0.005)
        return time.monotonic()

    def stop(self):
        self.process.terminate()
        self.process.wait()

    def restart_if_crashed(self):
        """Starts the server again when it died without being stopped (Debian's 2.4.4 now and then segfaults as a
        source connects just after it started); counts it in `crashes`."""
        if self.process.poll() is not None:
            self.crashes += 1
            self.start()

    def url(self, mount):
        return f"http://127.0.0.1:{self.port}{mount}"


class Source:
    """A source client: PUTs `data` to `mount`, looping, at `speed` times real time, on a thread of its own."""

    def __init__(self, icecast, mount, data, speed=1.0):
        credentials = base64.b64encode(f"source:{Icecast.PASSWORD}".encode()).decode()
        head = (f"PUT {mount} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic {credentials}\r\n"
                "Content-Type: audio/mpeg\r\nIce-Name: QueuePlayer bench\r\nIce-Public: 0\r\n\r\n").encode()
        # Icecast refuses a new source while it still holds the mount for the one before: asked again until taken.
        deadline = time.monotonic() + 10
        while True:
            icecast.restart_if_crashed()
            try:
                self.socket = socket.create_connection(("127.0.0.1", icecast.port))
                self.socket.sendall(head)
                if self.socket.recv(1024).split(b"\r\n")[0].endswith(b"200 OK"):
                    break
                self.socket.close()
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit(f"bench: icecast2 did not take the source for {mount}")
            time.sleep(0.1)
        self.sending = True
        self.thread = threading.Thread(target=self._send, args=(data, BYTES_PER_SECOND * speed), daemon=True)
        self.thread.start()

    def _send(self, data, rate):
        started, sent = time.monotonic(), 0
        while self.sending:
            due = int((time.monotonic() - started) * rate) - sent
            if due > 0:
                offset = sent % len(data)
                piece = data[offset:offset + due]
                try:
                    self.socket.sendall(piece)
                except OSError:
                    return
                sent += len(piece)
            time.sleep(0.02)

    def stop(self):
        self.sending = False
        self.thread.join()
        self.socket.close()


def players(playerctl, address, directory):
    """Each installed player's command for a URL, and its environment (mpv comes with `scripts/setup --bench`)."""
    pulse = dict(os.environ, PULSE_SERVER=address)
    state = os.path.join(directory, "state.sqlite")
    commands = {
        "QueuePlayer": (lambda url: [playerctl, "daemon", "--server", address, "--state-file", state, url], None),
        "mpg123": (lambda url: ["mpg123", "-q", "-o", "pulse", url], pulse),
        "mpv": (lambda url: ["mpv", "--no-config", "--no-video", "--no-terminal", "--ao=pulse", url], pulse),
    }
    return {name: command for name, command in commands.items() if name == "QueuePlayer" or shutil.which(name)}


def sounding(frames):
    return numpy.flatnonzero((frames != 0).any(axis=1))


class RunningPlayer:
    """A player started idle, told to open a URL the way its users tell it: our daemon through its control socket
    (`open`), mpv through its JSON IPC (`loadfile`), mpg123 in its remote-control mode (`LOAD`)."""

    def __init__(self, name, playerctl, address, directory):
        self.name = name
        pulse = dict(os.environ, PULSE_SERVER=address)
        path = os.path.join(directory, f"{name}.sock")
        state = os.path.join(directory, "state.sqlite")
        for stale in (path, state):
            if os.path.exists(stale):
                os.remove(stale)
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        if name == "QueuePlayer":
            self.process = subprocess.Popen([playerctl, "daemon", "--server", address, "--socket", path,
                                             "--state-file", state], **quiet)
        elif name == "mpv":
            self.process = subprocess.Popen(["mpv", "--no-config", "--no-video", "--no-terminal", "--ao=pulse",
                                             "--idle=yes", f"--input-ipc-server={path}"], env=pulse, **quiet)
        else:
            self.process = subprocess.Popen(["mpg123", "-R", "-o", "pulse"], stdin=subprocess.PIPE, env=pulse,
                                            **quiet)
        self.client = bench_control.LineClient(path) if name != "mpg123" else None
        # Started, connected to the sound server and idle before it is told anything.
        time.sleep(0.5)

    def open(self, url):
        """Tells the player to play `url`; returns the monotonic time just before the request left."""
        if self.name == "QueuePlayer":
            return self.client.ask({"command": "open", "uri": url})[1]
        if self.name == "mpv":
            return self.client.ask({"command": ["loadfile", url]})[1]
        sent = time.monotonic()
        self.process.stdin.write(f"LOAD {url}\n".encode())
        self.process.stdin.flush()
        return sent

    def stop(self):
        if self.client:
            self.client.close()
        else:
            # mpg123's remote-control mode leaves on QUIT, not on SIGTERM.
            self.process.stdin.write(b"QUIT\n")
            self.process.stdin.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def open_to_sound(address, player, url):
    """Milliseconds from telling a running `player` to open `url` to its first sample on the monitor."""
    recording = audible.MonitorRecording(address)
    sent = player.open(url)
    deadline, looked = sent + 10, 0
    while time.monotonic() < deadline:
        chunks = list(recording.chunks)
        if any(chunk.strip(b"\0") for chunk in chunks[looked:]):
            break
        looked = len(chunks)
        time.sleep(0.005)
    player.stop()
    frames = recording.finish()
    origin, period = recording.sink_clock()
    loud = sounding(frames)
    return None if len(loud) == 0 else (origin + loud[0] * period - sent) * 1000


def cpu_for(command, env, seconds):
    """CPU seconds `command` used in `seconds` of playing (stopped with SIGTERM, as a service manager does)."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    time.sleep(seconds)
    process.send_signal(signal.SIGTERM)
    _, _, usage = os.wait4(process.pid, 0)
    return usage.ru_utime + usage.ru_stime


def podcast_drop(address, command, env, reference, state):
    """Frames lost or repeated when the connection drops once, 40% into the podcast (played to its end)."""
    if os.path.exists(state):
        os.remove(state)
    recording = audible.MonitorRecording(address)
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    time.sleep(len(reference) / RATE + 3)
    process.terminate()
    process.wait()
    samples = recording.finish()
    # Compared where sound was heard; a player that stopped short of the end lacks the rest.
    lacking = int((reference != 0).any(axis=1).sum()) - int((samples != 0).any(axis=1).sum())
    return bench_control.frames_lost_or_repeated(samples, reference) + max(0, lacking)


class Feed:
    """The live stream's source, restarted at will (after a server restart, or at another speed)."""

    def __init__(self, icecast, mount, data):
        self.icecast, self.mount, self.data = icecast, mount, data
        self.source = None

    def start(self, speed=1.0):
        self.stop()
        self.source = Source(self.icecast, self.mount, self.data, speed)

    def stop(self):
        if self.source:
            self.source.stop()
            self.source = None


def live_drop(address, icecast, feed, command, env, state):
    """The server stops 3 s into the stream and starts again 2 s later, its source then sending 4x real time:
    milliseconds from its port answering again to sound, or None when the sound did not come back."""
    if os.path.exists(state):
        os.remove(state)
    feed.start()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    time.sleep(3)
    icecast.stop()
    feed.stop()
    time.sleep(2)
    recording = audible.MonitorRecording(address)
    answered = icecast.start()
    feed.start(speed=4)
    time.sleep(4)
    frames = recording.finish()
    origin, period = recording.sink_clock()
    process.terminate()
    process.wait()
    loud = sounding(frames)
    return None if len(loud) == 0 else (origin + loud[0] * period - answered) * 1000


def memory_over_stream(playerctl, icecast, mount, stream_seconds, speed):
    """The daemon's resident memory (MiB) while it plays `stream_seconds` of a live stream into an unpaced null sink,
    the source sending at `speed` times real time: (after the first tenth, at the end, the most)."""
    with tempfile.TemporaryDirectory() as directory:
        process = subprocess.Popen([playerctl, "daemon", "--sink", "null", "--unpaced", "--state-file",
                                    os.path.join(directory, "state.sqlite"), icecast.url(mount)],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        samples = []
        ends = time.monotonic() + stream_seconds / speed
        while time.monotonic() < ends:
            time.sleep(2)
            with open(f"/proc/{process.pid}/status") as status:
                samples.append(int(re.search(r"VmRSS:\s+(\d+)", status.read())[1]) / 1024)
        process.terminate()
        process.wait()
    return samples[len(samples) // 10], samples[-1], max(samples)


def report(playerctl, address, podcast, runs):
    """Prints the figures and checks the targets. `podcast` is a 192 kbps 44.1 kHz item of some seconds."""
    with open(podcast, "rb") as file:
        data = file.read()
    reference = audible.reference_decode(podcast, tempfile.mkdtemp())
    with tempfile.TemporaryDirectory() as directory:
        state = os.path.join(directory, "state.sqlite")
        commands = players(playerctl, address, directory)
        files = FileServer({"/podcast.mp3": data})
        icecast = Icecast(directory)
        icecast.start()
        feed = Feed(icecast, "/live.mp3", data)
        feed.start()
        live = icecast.url("/live.mp3")
        try:
            time.sleep(1)
            print("network items on loopback (podcast: HTTP with ranges; live: icecast2, source in real time):")
            opened = {}
            for kind, url in (("podcast", files.url("/podcast.mp3")), ("live", live)):
                for name in commands:
                    times = [open_to_sound(address, RunningPlayer(name, playerctl, address, directory), url)
                             for _ in range(runs)]
                    times = [value for value in times if value is not None]
                    opened[kind, name] = statistics.median(times) if times else float("inf")
                print(f"  `open` {kind} URL in a running player to its first sample: " + ", ".join(
                    f"{name} {opened[kind, name]:.1f} ms" for name in commands))
                check(f"open {kind} URL to first sample", f"{opened[kind, 'QueuePlayer']:.1f} vs mpg123 "
                      f"{opened[kind, 'mpg123']:.1f} ms", "<= mpg123's",
                      opened[kind, "QueuePlayer"] <= opened[kind, "mpg123"])

            cpu = {name: statistics.median([cpu_for(command(live), env, 30) for _ in range(min(runs, 3))])
                   for name, (command, env) in commands.items()}
            print("  CPU playing 30 s of the live stream: " + ", ".join(f"{name} {cpu[name]:.3f} s" for name in cpu))
            at_most("CPU playing 30 s from Icecast, / mpg123's", cpu["QueuePlayer"] / cpu["mpg123"], 1.0, "x")

            lost = {}
            for name, (command, env) in commands.items():
                files.drops["/podcast.mp3"] = len(data) * 2 // 5
                lost[name] = podcast_drop(address, command(files.url("/podcast.mp3")), env, reference, state)
            print("  frames lost or repeated, the podcast's connection dropped 40% in: "
                  + ", ".join(f"{name} {lost[name]}" for name in lost))
            at_most("podcast drop: frames lost or repeated", lost["QueuePlayer"], 0, digits=0)

            returns = {}
            for name, (command, env) in commands.items():
                backs = [live_drop(address, icecast, feed, command(live), env, state) for _ in range(min(runs, 3))]
                backs = [value for value in backs if value is not None]
                returns[name] = f"{statistics.median(backs):.0f} ms" if backs else "never"
                if name == "QueuePlayer":
                    back = statistics.median(backs) if backs else float("inf")
            print("  icecast2 stopped for 2 s mid-stream, sound back after it answers again: "
                  + ", ".join(f"{name} {returns[name]}" for name in returns))
            # The reconnect waits' cap (ReconnectPolicy.longestWait, 2 s) plus 1 s: a down server is asked for no
            # more than about twice in 5 s however long it stays down.
            at_most("live drop: sound back after the server answers (ms)", back, 3000, digits=0)

            feed.start(speed=20)
            first, last, most = memory_over_stream(playerctl, icecast, "/live.mp3", 3600, 20)
            print(f"  resident memory over an hour of live stream (sent 20x real time, unpaced sink): "
                  f"{first:.1f} MiB after 6 min, {last:.1f} at the end, {most:.1f} at most")
            at_most("RSS growth over an hour of live stream (MiB)", most - first, 1.0, digits=1)
        finally:
            feed.stop()
            icecast.stop()
            files.stop()
            if icecast.crashes:
                print(f"  (icecast2 crashed {icecast.crashes} time(s) as a source connected, and was started again)")
    print()
