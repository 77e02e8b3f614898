"""Git as a subprocess, with a clean environment: no prompts, no hooks, no user config surprises."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from hermes.errors import HermesError

_TIMEOUT = 600


class GitError(HermesError):
    pass


def _git() -> str:
    git = shutil.which("git")
    if git is None:
        raise GitError("git is not installed or not on PATH; install git to install plugins from a repository.")
    return git


def run_git(*args: str, cwd: Path | None = None) -> str:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "SSH_ASKPASS": "",
           "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"}
    command = [_git(), "-c", "core.hooksPath=/dev/null", "-c", "advice.detachedHead=false", *args]
    try:
        result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=_TIMEOUT,
                                stdin=subprocess.DEVNULL, check=False)
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} did not finish within {_TIMEOUT} s.") from None
    if result.returncode != 0:
        detail = (result.stderr or result.stdout).strip().splitlines()
        raise GitError(f"git {args[0]} failed: {detail[-1] if detail else f'exit code {result.returncode}'}")
    return result.stdout.strip()


def clone(url: str, target: Path) -> None:
    run_git("clone", "--quiet", "--no-checkout", "--", url, str(target))


def checkout(repo: Path, ref: str) -> str:
    """Check out `ref` detached and return the full commit id it resolved to."""
    commit = run_git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", cwd=repo)
    run_git("checkout", "--quiet", "--detach", commit, cwd=repo)
    return commit
