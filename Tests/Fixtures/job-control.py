#!/usr/bin/env python3
"""Plays a shell's part in job control around a command, on a private pseudo-terminal.

Usage: job-control.py LOG -- COMMAND...

The driver becomes a session leader on a new pty, starts COMMAND in its own process group (stdin and stdout on the
pty, stderr into LOG), and then, as an interactive shell would:
  1. leaves it in the background, as `COMMAND &` does;
  2. gives it the terminal and SIGCONT, as `fg` does, and writes <<FG>> to the terminal;
  3. takes the terminal back and sends SIGCONT, as Ctrl-Z then `bg` leave it (without the stop), writing <<BG>>;
  4. sends SIGTERM.
The terminal has TOSTOP set, so a background process that wrote to it without ignoring SIGTTOU would stop.
Between steps it waits for the log to show the transition. Prints one JSON object: the command's exit status, the
steps whose log line never came, and everything written to the terminal."""

import json
import os
import pty
import select
import signal
import sys
import termios
import fcntl
import time
import traceback

signal.pthread_sigmask(signal.SIG_SETMASK, [])
log_path, command = sys.argv[1], sys.argv[3:]
master, slave = pty.openpty()
attributes = termios.tcgetattr(slave)
attributes[3] |= termios.TOSTOP
termios.tcsetattr(slave, termios.TCSANOW, attributes)


def shell():
    os.setsid()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    child = os.fork()
    if child == 0:
        os.setpgid(0, 0)
        os.dup2(slave, 0)
        os.dup2(slave, 1)
        os.dup2(os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 2)
        os.execv(command[0], command)
    try:
        os.setpgid(child, child)
    except PermissionError:
        # EACCES: the child has already made its own group and exec'd, the race every shell lets pass.
        pass
    missed = []

    def wait_for(text, count):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with open(log_path, errors="replace") as file:
                if file.read().count(text) >= count:
                    return
            time.sleep(0.02)
        missed.append(f"{text} x{count}")

    try:
        wait_for("entered the background", 1)
        time.sleep(0.5)
        os.tcsetpgrp(slave, child)
        os.write(slave, b"<<FG>>")
        os.kill(-child, signal.SIGCONT)
        wait_for("entered the foreground", 1)
        time.sleep(0.8)
        os.tcsetpgrp(slave, os.getpgrp())
        os.write(slave, b"<<BG>>")
        os.kill(-child, signal.SIGCONT)
        wait_for("entered the background", 2)
        time.sleep(0.5)
        os.kill(child, signal.SIGTERM)
    except OSError:
        # The command must not outlive a failed step: it holds the test runner's descriptor that tells it this
        # script has exited, and the test would wait for it forever.
        traceback.print_exc()
        missed.append("a-shell-step-failed")
        os.killpg(child, signal.SIGKILL)
    _, status = os.waitpid(child, 0)
    os.write(slave, ("<<STATUS %d %s>>" % (os.waitstatus_to_exitcode(status), ",".join(missed))).encode())
    time.sleep(0.2)
    os._exit(0)


driver = os.fork()
if driver == 0:
    shell()
os.close(slave)
output = b""
while True:
    ready, _, _ = select.select([master], [], [], 30)
    if not ready:
        break
    try:
        data = os.read(master, 65536)
    except OSError:
        break
    if not data:
        break
    output += data
    if b"<<STATUS" in output and output.endswith(b">>"):
        break
os.waitpid(driver, 0)
text = output.decode(errors="replace")
status_part = text[text.find("<<STATUS"):] if "<<STATUS" in text else ""
fields = status_part.strip("<>").split(" ") if status_part else []
print(json.dumps({"status": int(fields[1]) if len(fields) > 1 else None,
                  "missed": fields[2].split(",") if len(fields) > 2 and fields[2] else [],
                  "terminal": text}))
