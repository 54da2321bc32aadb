"""Stand-ins for srun, pdsh and kubectl: run a command once per simulated node.

Each node is a name in $FAKE_NODES with its own log directory, $FAKE_NODE_ROOT/<node>/msrun_log:
the path $LOG_DIR in a command is that node's (as a node-local disk is), unless
$FAKE_SHARED is set (one directory every node sees). Each task gets the variables the real
tool gives it (SLURM_PROCID, SLURM_NTASKS, SLURMD_NODENAME) and MSRUNWATCH_HOST, since
the tasks all run on this one machine, whose hostname they share."""

from __future__ import annotations

import os
import subprocess
import sys
import threading


def nodes() -> list[str]:
    return os.environ["FAKE_NODES"].split()


def local(text: str, node: str) -> str:
    if os.environ.get("FAKE_SHARED"):
        return text
    return text.replace(os.environ["LOG_DIR"], f"{os.environ['FAKE_NODE_ROOT']}/{node}/msrun_log")


def env(k: int, node: str) -> dict[str, str]:
    return {
        **os.environ,
        "SLURM_PROCID": str(k),
        "SLURM_NTASKS": str(len(nodes())),
        "SLURMD_NODENAME": node,
        "MSRUNWATCH_HOST": node,
        "LOG_DIR": local(os.environ["LOG_DIR"], node),
    }


def run_all(argv_of, prefix_of) -> int:
    """Run every node's task at once, their lines interleaved as they come; the highest
    exit code (as srun returns)."""
    lock = threading.Lock()
    codes = [0] * len(nodes())

    def task(k: int, node: str) -> None:
        proc = subprocess.Popen(argv_of(k, node), env=env(k, node), stdout=subprocess.PIPE)
        assert proc.stdout is not None
        for line in proc.stdout:
            with lock:
                sys.stdout.buffer.write(prefix_of(k, node) + line)
                sys.stdout.buffer.flush()
        codes[k] = proc.wait()

    threads = [threading.Thread(target=task, args=(k, n)) for k, n in enumerate(nodes())]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return max(codes)


def srun(args: list[str]) -> int:
    label = False
    while args and args[0].startswith("-"):
        option = args.pop(0)
        label = label or option in ("-l", "--label")
    return run_all(
        lambda k, node: [local(a, node) for a in args],
        lambda k, node: f"{k}: ".encode() if label else b"",
    )


def pdsh(args: list[str]) -> int:
    assert args[0] == "-w"
    os.environ["FAKE_NODES"] = " ".join(args[1].split(","))
    command = " ".join(args[2:])
    return run_all(
        lambda k, node: ["sh", "-c", local(command, node)], lambda k, node: f"{node}: ".encode()
    )


def kubectl(args: list[str]) -> int:
    if args[:2] == ["get", "pods"]:
        print("\n".join(f"pod/{node}" for node in nodes()))
        return 0
    assert args[0] == "exec"
    node = args[1].split("/", 1)[1]
    command = args[args.index("--") + 1 :]
    k = nodes().index(node)
    return subprocess.run([local(a, node) for a in command], env=env(k, node)).returncode


if __name__ == "__main__":
    tool = os.path.basename(sys.argv[1])
    sys.exit({"srun": srun, "pdsh": pdsh, "kubectl": kubectl}[tool](sys.argv[2:]))
