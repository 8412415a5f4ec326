"""The bot's watcher, run as a file: ``python -I -S watcher.py BOT_PID WORKDIR CODES [CGROUP_DIR...]``.

The forked child of :func:`referee.runtime.sandbox.child.become_watcher` executes
this (standard library only: ``-I -S`` sees no site-packages and not this
package) after forking the bot (``BOT_PID``: bwrap, or the bot itself in the
"basic" sandbox). Its fd 3 is the read end of the referee's lifeline pipe
(:func:`referee.runtime.sandbox.linux.lifeline_fd`), fd 4 (when a root referee
gave the bot a uid of its own) the lock of that uid, held until this process
exits. It waits for whichever comes first:

* the bot exits: remove its control groups (``CGROUP_DIR...``, killing what is
  left in them) and its temporary folder ``WORKDIR`` (``""``: none), then exit
  as the bot did - killed by the same signal, or with its exit status
  (``CODES`` "1": bwrap reports a bot killed by signal N as exit status 128 + N,
  turned back into the signal);
* end of file on the lifeline (the referee is gone, however it died): kill the
  bot, everything in its control groups and this process group, after the same
  clean-up.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time

LIFELINE = 3


def rmtree(top: str) -> None:
    """Remove ``top`` and everything under it (never follows a link; never raises)."""
    if not top:
        return
    for root, dirs, files in os.walk(top, topdown=False):
        for name in files:
            try:
                os.unlink(os.path.join(root, name))
            except OSError:
                pass
        for name in dirs:
            p = os.path.join(root, name)
            try:
                if os.path.islink(p):
                    os.unlink(p)
                else:
                    os.rmdir(p)
            except OSError:
                pass
    try:
        os.rmdir(top)
    except OSError:
        pass


def kill_groups(groups: list[str]) -> None:
    """Kill every process in the control groups (``cgroup.kill``, else one by one)."""
    for d in groups:
        try:
            with open(os.path.join(d, "cgroup.kill"), "w") as f:
                f.write("1")
            return
        except OSError:
            pass
    for _ in range(100):
        pids: list[str] = []
        for d in groups:
            try:
                with open(os.path.join(d, "cgroup.procs")) as f:
                    pids = f.read().split()
                break
            except OSError:
                pass
        if not pids:
            return
        for p in pids:
            try:
                os.kill(int(p), signal.SIGKILL)
            except OSError:
                pass


def remove_groups(groups: list[str]) -> None:
    """Kill and remove the control groups (innermost first), trying for up to 2 s."""
    if not groups:
        return
    deadline = time.monotonic() + 2.0
    while True:
        kill_groups(groups)
        left = False
        for d in reversed(groups):
            try:
                os.rmdir(d)
            except FileNotFoundError:
                pass
            except OSError:
                left = True
        if not left or time.monotonic() > deadline:
            return
        time.sleep(0.005)


def wait_first(pid: int) -> bool | None:
    """Wait until the bot exits or the lifeline ends: True when the referee is
    gone, False when the bot exited, None when the bot exited and was reaped
    (no pidfd on this system: polled instead)."""
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    if pidfd is not None:
        p = select.poll()
        p.register(LIFELINE, select.POLLIN | select.POLLHUP)
        p.register(pidfd, select.POLLIN)
        while True:
            try:
                ready = p.poll()
            except InterruptedError:
                continue
            # end of file (or an error) on the lifeline: the referee is gone
            return any(fd == LIFELINE for fd, _ev in ready)
    while True:
        r, _, _ = select.select([LIFELINE], [], [], 0.25)
        if r:
            return True
        if os.waitpid(pid, os.WNOHANG)[0]:
            return None


def reap(pid: int) -> int:
    """The bot's wait status."""
    while True:
        try:
            return os.waitpid(pid, 0)[1]
        except InterruptedError:
            continue
        except ChildProcessError:
            return 0


def exit_like(status: int, codes: bool) -> None:
    """Exit as the bot did: killed by its signal, else with its exit status."""
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
    if not sig and codes and os.WIFEXITED(status) and 128 < os.WEXITSTATUS(status) <= 128 + 64:
        sig = os.WEXITSTATUS(status) - 128  # bwrap reports a bot killed by signal N as exit status 128 + N
    if sig:
        try:
            signal.signal(sig, signal.SIG_DFL)
        except (OSError, ValueError):
            pass
        os.kill(os.getpid(), sig)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


def main(argv: list[str]) -> None:
    pid, workdir, codes, groups = int(argv[0]), argv[1], argv[2] == "1", argv[3:]
    referee_gone = wait_first(pid)
    if referee_gone is None:  # reaped while polling
        remove_groups(groups)
        rmtree(workdir)
        os._exit(0)
    if referee_gone:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
        kill_groups(groups)
    status = reap(pid)
    remove_groups(groups)
    rmtree(workdir)
    if referee_gone:
        os.killpg(0, signal.SIGKILL)
    exit_like(status, codes)


if __name__ == "__main__":
    main(sys.argv[1:])
