"""The memory benchmark of scripts/bench: what each player costs, idle and while playing the same item into the same
sink, as /proc/PID/smaps_rollup counts it (RSS; PSS, which shares each shared page among the processes mapping it;
USS, the pages the process alone holds; anonymous memory; the peak RSS from VmHWM), and what each part of
QueuePlayer's shipped daemon costs: its own binary's resident pages attributed to the Swift runtime,
FoundationEssentials, SwiftNIO, GRDB and the rest by the symbols and sections they fall in (/proc/PID/pagemap), and
each shared library (libpulse, sd-bus's libsystemd, libsqlite3, ...) from its mappings."""

import bisect
import collections
import os
import re
import shutil
import socket
import subprocess
import time

from bench_targets import at_most, check  # scripts/bench_targets.py

PAGE = os.sysconf("SC_PAGE_SIZE")
MIB = 1024 * 1024


def rollup(pid):
    """{"rss", "pss", "uss", "anonymous", "file", "peak"} in bytes: now, and VmHWM (the peak resident set) so far.
    USS is the private pages, clean and dirty: what the process alone holds, and what ending it would free."""
    fields = {}
    with open(f"/proc/{pid}/smaps_rollup") as file:
        for line in file:
            parts = line.split()
            if len(parts) == 3 and parts[2] == "kB":
                fields[parts[0].rstrip(":")] = int(parts[1]) * 1024
    with open(f"/proc/{pid}/status") as file:
        peak = next(int(line.split()[1]) * 1024 for line in file if line.startswith("VmHWM"))
    rss, anonymous = fields["Rss"], fields["Anonymous"]
    return {"rss": rss, "pss": fields["Pss"], "uss": fields["Private_Clean"] + fields["Private_Dirty"],
            "anonymous": anonymous, "file": rss - anonymous - fields.get("Shmem", 0), "peak": peak}


def mappings(pid):
    """Each mapping of `pid`: [start, end, file offset, path or pseudo-name, Rss bytes, Anonymous bytes]."""
    found = []
    header = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) \S+ ([0-9a-f]+) \S+ \d+\s*(.*)$")
    with open(f"/proc/{pid}/smaps") as file:
        for line in file:
            match = header.match(line)
            if match:
                start, end, offset, path = match.groups()
                found.append([int(start, 16), int(end, 16), int(offset, 16), path or "[anonymous]", 0, 0])
            elif line.startswith("Rss:"):
                found[-1][4] = int(line.split()[1]) * 1024
            elif line.startswith("Anonymous:"):
                found[-1][5] = int(line.split()[1]) * 1024
    return found


def resident_pages(pid, start, end):
    """The resident pages of [start, end), each as (address, file-backed): pagemap bit 61 tells a page of the file
    from a private copy written since (relocated pointers, .data). Needs root."""
    pages = []
    with open(f"/proc/{pid}/pagemap", "rb") as pagemap:
        pagemap.seek(start // PAGE * 8)
        data = pagemap.read((end - start) // PAGE * 8)
    for index in range(len(data) // 8):
        entry = int.from_bytes(data[index * 8:index * 8 + 8], "little")
        if entry >> 63 & 1:
            pages.append((start + index * PAGE, bool(entry >> 61 & 1)))
    return pages


# Swift modules and C symbol prefixes, by the part of the daemon they belong to.
PARTS = (
    ("Swift runtime and standard library", ("Swift", "_Concurrency", "_StringProcessing", "_RegexParser",
                                            "SwiftShims", "Synchronization", "Dispatch", "_swift", "swift_",
                                            "_ZN5swift", "_ZNK5swift", "_ZN6__swift", "dispatch_", "_dispatch",
                                            "_ZN4llvm", "_ZNK4llvm")),
    ("Foundation (with CoreFoundation and ICU)", ("Foundation", "_Foundation", "CoreFoundation", "_CF", "__CF",
                                                  "CF", "_ZN6icu_", "u_", "ucal_", "ucol_", "udat_", "unum_",
                                                  "uloc_", "ures_", "ubrk_", "utrans_", "icudt")),
    ("SwiftNIO", ("NIO", "_NIO", "CNIO", "c_nio")),
    ("GRDB", ("GRDB",)),
    ("swift-argument-parser", ("ArgumentParser",)),
    ("swift-log, swift-service-lifecycle and their helpers", ("Logging", "ServiceLifecycle", "UnixSignals",
                                                              "AsyncAlgorithms", "DequeModule", "Atomics",
                                                              "_AtomicsShims", "InternalCollectionsUtilities")),
    ("QueuePlayer's own code", ("QueuePlayer", "queueplayerd", "playerctl", "CMpg123", "CPulse", "CSDBus", "CSoxr",
                                "CMalloc")),
)
# Swift's standard substitutions for stdlib and concurrency types, which can open a mangled name ($sSS: String).
STANDARD_SUBSTITUTION = re.compile(r"^(s|S[a-zA-Z]|Sc[a-zA-Z])")


def module_of(symbol):
    """The Swift module a mangled symbol belongs to, or the symbol itself for C and C++ names."""
    for prefix in ("$s", "_$s"):
        if symbol.startswith(prefix):
            rest = symbol[len(prefix):]
            if STANDARD_SUBSTITUTION.match(rest):
                return "Swift"
            match = re.match(r"(\d+)", rest)
            if match:
                begin = len(match.group(1))
                return rest[begin:begin + int(match.group(1))]
    return symbol


def part_of(symbol):
    module = module_of(symbol)
    for part, prefixes in PARTS:
        if any(module.startswith(prefix) for prefix in prefixes):
            return part
    return "other code and data (C libraries linked in, unnamed)"


def binary_layout(binary):
    """(sections, symbols) of an ELF file: [(start, end, name)] of its allocated sections by virtual address, and a
    sorted list of (start, end, part) of its sized code and data symbols."""
    sections = []
    for line in subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True).stdout.splitlines():
        match = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", line)
        if match and int(match.group(2), 16) > 0:
            address, size = int(match.group(2), 16), int(match.group(3), 16)
            sections.append((address, address + size, match.group(1)))
    symbols = []
    listing = subprocess.run(["nm", "-S", "--defined-only", binary], capture_output=True, text=True).stdout
    for line in listing.splitlines():
        fields = line.split(" ", 3)
        if len(fields) == 4 and fields[2] in "tTrRdDbB":
            start, size = int(fields[0], 16), int(fields[1], 16)
            if size:
                symbols.append((start, start + size, part_of(fields[3])))
    symbols.sort()
    return sections, symbols


def section_group(name):
    """The group of a section whose pages are counted as a whole rather than by symbol, or None."""
    if name.startswith("swift5_") or name == ".swift_modhash":
        return "Swift metadata sections (swift5_*)"
    if name in (".eh_frame", ".eh_frame_hdr", ".gcc_except_table"):
        return "unwind tables (.eh_frame)"
    if name in (".dynsym", ".dynstr", ".gnu.hash", ".rela.dyn", ".relr.dyn", ".rela.plt", ".gnu.version",
                ".gnu.version_r"):
        return "dynamic symbols and relocations"
    return None


def attribute_binary(pid, binary):
    """{part: [file-backed bytes, anonymous bytes]} of the binary's resident pages: a page of code or data is split
    between the parts whose symbols it holds, by bytes; pages of metadata, unwind tables and relocations go to
    their section's group."""
    path = os.path.realpath(binary)
    maps = [entry for entry in mappings(pid) if entry[3] == path]
    base = min(entry[0] for entry in maps)  # a PIE's first segment is at virtual address 0
    sections, symbols = binary_layout(binary)
    starts = [symbol[0] for symbol in symbols]
    totals = collections.defaultdict(lambda: [0, 0])
    for start, end, *_ in maps:
        for address, file_backed in resident_pages(pid, start, end):
            low, high = address - base, address - base + PAGE
            shares = collections.Counter()
            for section_start, section_end, name in sections:
                overlap = min(high, section_end) - max(low, section_start)
                if overlap > 0 and section_group(name):
                    shares[section_group(name)] += overlap
            index = max(0, bisect.bisect_right(starts, low) - 1)
            while index < len(symbols) and symbols[index][0] < high:
                overlap = min(high, symbols[index][1]) - max(low, symbols[index][0])
                if overlap > 0:
                    shares[symbols[index][2]] += overlap
                index += 1
            counted = sum(shares.values())
            if counted < PAGE:
                shares["other code and data (C libraries linked in, unnamed)"] += PAGE - counted
                counted = PAGE
            for part, share in shares.items():
                totals[part][0 if file_backed else 1] += PAGE * share / counted
    return totals


def attribute_libraries(pid, binary):
    """{library: [file-backed bytes, anonymous bytes]} for every other file mapped, and the anonymous mappings
    (heap, thread stacks) together."""
    totals = collections.defaultdict(lambda: [0, 0])
    for _, _, _, path, rss, anonymous in mappings(pid):
        if path == os.path.realpath(binary):
            continue
        if path.startswith("/"):
            name = re.sub(r"\.so[.\d]*$", "", os.path.basename(path))
        else:
            name = "heap, thread stacks and other anonymous memory"
        totals[name][0] += rss - anonymous
        totals[name][1] += anonymous
    return totals


def breakdown(pid, binary):
    """Where the resident memory of the process `pid` (running `binary`) is: (the binary's parts, other mappings),
    each a list of (name, [file-backed bytes, anonymous bytes]), largest first."""
    rows = sorted(attribute_binary(pid, binary).items(), key=lambda row: -sum(row[1]))
    libraries = sorted(attribute_libraries(pid, binary).items(), key=lambda row: -sum(row[1]))
    return rows, libraries


def print_breakdown(rows, libraries, heading):
    """Prints a ``breakdown``: the parts and mappings of 64 KiB or more."""
    print(heading)
    print(f"  {'part':56} {'file-backed':>11} {'anonymous':>10}   (MiB)")
    for label, group in (("in the daemon's binary (queueplayerd):", rows), ("other mappings:", libraries)):
        print(f"  {label}")
        for part, (file_backed, anonymous) in group:
            if file_backed + anonymous >= 64 * 1024:
                print(f"    {part:54} {file_backed / MIB:11.2f} {anonymous / MIB:10.2f}")


class MPD:
    """An MPD of its own, in `work`, playing the folder `music` into the PulseAudio server at `server`, controlled
    over its socket."""

    def __init__(self, work, server, music):
        os.makedirs(work, exist_ok=True)
        self.socket_path = os.path.join(work, "socket")
        config = os.path.join(work, "mpd.conf")
        with open(config, "w") as file:
            file.write(f'music_directory "{music}"\ndb_file "{work}/database"\nstate_file "{work}/state"\n'
                       f'bind_to_address "{self.socket_path}"\nlog_file "{work}/log"\n'
                       f'audio_output {{\n type "pulse"\n name "bench"\n server "{server}"\n}}\n')
        for path in (self.socket_path, os.path.join(work, "database"), os.path.join(work, "state")):
            if os.path.exists(path):
                os.remove(path)
        self.process = subprocess.Popen(["mpd", "--no-daemon", config], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while not os.path.exists(self.socket_path):
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise SystemExit(f"bench: MPD did not start (see {work}/log)")
            time.sleep(0.05)
        self.connection = socket.socket(socket.AF_UNIX)
        self.connection.connect(self.socket_path)
        self.replies = self.connection.makefile("r")
        self.replies.readline()  # "OK MPD <version>"

    def ask(self, command):
        """Sends one command; returns its reply lines; exits on an ACK."""
        self.connection.sendall(command.encode() + b"\n")
        lines = []
        for line in self.replies:
            if line.startswith("OK"):
                return lines
            if line.startswith("ACK"):
                raise SystemExit(f"bench: MPD refused {command!r}: {line.strip()}")
            lines.append(line.strip())
        raise SystemExit("bench: MPD closed the connection")

    def play(self, name):
        """Scans the music folder, then plays the file `name` of it."""
        self.ask("update")
        deadline = time.monotonic() + 30
        while any(line.startswith("updating_db:") for line in self.ask("status")) or \
                f"file: {name}" not in self.ask("listall"):
            if time.monotonic() > deadline:
                raise SystemExit(f"bench: MPD did not find {name} in its music folder")
            time.sleep(0.05)
        self.ask(f'add "{name}"')
        self.ask("play")

    def stop(self):
        self.connection.close()
        self.process.terminate()
        self.process.wait()


def measured_process(command, env, settle, playing=None):
    """Starts `command` (its standard input a pipe kept open, for players that wait on it), waits `settle` seconds,
    and returns (its memory figures, and the result of `inspect(pid)` if given); then stops it."""
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env=env)
    try:
        time.sleep(settle)
        if process.poll() is not None:
            raise SystemExit(f"bench: {command[0]} ended early (status {process.returncode})")
        return rollup(process.pid), (playing(process.pid) if playing else None)
    finally:
        # mpg123 -R catches SIGTERM and goes on reading commands: the end of its input stops it.
        process.stdin.close()
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def report(playerctl, server, item, work, settle=5.0):
    """Prints each player's memory idle (started, nothing playing) and 5 s into playing `item` into the same sink,
    the target (PSS while playing <= half of MPD's), and where the daemon's memory is. Our daemon runs as it ships
    (MPRIS on the session bus in the environment, socket and store open); mpg123's idle is its remote-control mode
    (-R), waiting for a command; mpv's is --idle; MPD's is after it has scanned the item's folder."""
    pulse_env = dict(os.environ, PULSE_SERVER=server)
    state = os.path.join(work, "memory.sqlite")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(state + suffix):
            os.remove(state + suffix)
    # `playerctl daemon` becomes queueplayerd (exec, same process), which is what is mapped.
    daemon = os.path.join(os.path.dirname(playerctl), "queueplayerd")
    ours = [playerctl, "daemon", "--server", server, "--state-file", state]
    mpv = ["mpv", "--no-config", "--no-video", "--no-terminal", "--ao=pulse"]
    commands = {
        "QueuePlayer daemon": (ours, ours + [item], os.environ),
        "mpg123": (["mpg123", "-R", "-o", "pulse"], ["mpg123", "-q", "-o", "pulse", item], pulse_env),
    }
    if shutil.which("mpv"):
        commands["mpv"] = (mpv + ["--idle"], mpv + [item], pulse_env)
    found = {}
    parts = []
    for player, (idle, playing, env) in commands.items():
        idle_figures, _ = measured_process(idle, env, settle)
        inspect = (lambda pid: breakdown(pid, daemon)) if player == "QueuePlayer daemon" else None
        playing_figures, inspected = measured_process(playing, env, settle, inspect)
        parts = inspected or parts
        found[player] = (idle_figures, playing_figures)
    if shutil.which("mpd"):
        mpd = MPD(os.path.join(work, "mpd"), server, os.path.dirname(item))
        try:
            mpd.ask("update")
            time.sleep(settle)
            idle_figures = rollup(mpd.process.pid)
            mpd.play(os.path.basename(item))
            time.sleep(settle)
            found["MPD"] = (idle_figures, rollup(mpd.process.pid))
        finally:
            mpd.stop()
    print(f"memory, idle and {settle:g} s into playing a 30 s item into the null sink (MiB; smaps_rollup):")
    print(f"  {'player':20} {'':8} {'RSS':>6} {'PSS':>6} {'USS':>6} {'anonymous':>10} {'peak RSS':>9}")
    for player, figures in found.items():
        for label, row in zip(("idle", "playing"), figures):
            print(f"  {player if label == 'idle' else '':20} {label:8} {row['rss'] / MIB:6.1f} {row['pss'] / MIB:6.1f} "
                  f"{row['uss'] / MIB:6.1f} {row['anonymous'] / MIB:10.1f} {row['peak'] / MIB:9.1f}")
    ours_pss = found["QueuePlayer daemon"][1]["pss"]
    if "MPD" in found:
        theirs_pss = found["MPD"][1]["pss"]
        print(f"  PSS playing, QueuePlayer / MPD: {ours_pss / theirs_pss:.2f}   (target <= 0.5)")
        at_most("PSS playing, / MPD's", ours_pss / theirs_pss, 0.5, "x")
    else:
        print("  (MPD is not installed: `scripts/setup --bench` adds it for the target, PSS playing <= half MPD's)")
        check("PSS playing, / MPD's", f"{ours_pss / MIB:.1f} MiB", "<= 0.5x", False)
    print_breakdown(*parts, "where the playing daemon's memory is (its resident pages, from /proc/PID/pagemap):")
    print()
