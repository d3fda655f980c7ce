"""One retry rule: docs/cli.md's table "Exit status and retries" is the rule,
and the package's error classes and the orchestrator examples follow it.

The test reads the table from the repository (this file's ../../docs), so it
fails when the documentation, ``error_class`` or the examples diverge.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import pswap
from pswap._errors import _BY_CODE, command_of, error_class

ROOT = Path(__file__).resolve().parents[2]

#: Commands the rule is checked for: every command that writes, and a few that read.
COMMANDS = ["commit", "commit --append", "merge", "rollback", "stage", "publish", "gc", "verify", "status"]


def rule_table() -> dict[str, tuple[list[int], dict[str, bool], bool]]:
    """The table: code -> (exit statuses, retry? by command, retry? of any other command)."""
    text = (ROOT / "docs" / "cli.md").read_text()
    section = text.split("### Exit status and retries", 1)[1]
    out: dict[str, tuple[list[int], dict[str, bool], bool]] = {}
    for line in section.splitlines():
        m = re.match(r"^\| `(\w+)` \| ([\d, ]+) \| (.*) \|$", line)
        if m is None:
            if out and not line.startswith("|"):
                break  # the table ended
            continue
        code, exits, rule = m.group(1), [int(x) for x in m.group(2).split(",")], m.group(3)
        by_command: dict[str, bool] = {}
        default: bool | None = None
        if rule.startswith(("yes", "no")):
            default = rule.startswith("yes")
        else:  # "`merge`, `commit --append`: yes; any other command: no"
            for clause in rule.split(";"):
                head, _, verdict = clause.partition(":")
                yes = verdict.strip().startswith("yes")
                if head.strip() == "any other command":
                    default = yes
                for cmd in re.findall(r"`([^`]+)`", head):
                    by_command[cmd] = yes
        assert default is not None, f"docs/cli.md: the rule of {code} names no default: {rule!r}"
        out[code] = (exits, by_command, default)
    assert len(out) >= 15, f"docs/cli.md: the retry table has {len(out)} rows"
    return out


def test_codes_are_the_documented_codes() -> None:
    """Every code the package knows is in the table, and every code of the table
    (but ``failure``, the fallback) in the package."""
    table = rule_table()
    assert set(_BY_CODE) == set(table) - {"failure"}
    listed = (ROOT / "docs" / "cli.md").read_text().split("`code` is one of", 1)[1].split("`hint` is", 1)[0]
    assert set(re.findall(r"`(\w+)`", listed)) == set(table)


@pytest.mark.parametrize("command", COMMANDS)
def test_error_class_follows_the_table(command: str) -> None:
    for code, (exits, by_command, default) in rule_table().items():
        want = by_command.get(command, default)
        for exit_code in exits:
            cls = error_class(code, exit_code, command)
            assert cls.retryable is want, f"{command}: {code} (exit {exit_code}) is {cls.__name__}, retryable={cls.retryable}; docs/cli.md says {want}"
            assert issubclass(cls, pswap.RetryableError if want else pswap.FatalError), (command, code, cls)


def test_conflict_depends_on_the_command() -> None:
    """The table's one command-dependent row, spelled out."""
    _, by_command, default = rule_table()["conflict"]
    assert by_command == {"merge": True, "commit --append": True} and default is False
    assert command_of(["commit", "--append", "--partition=dt=2026-11-29", "-"]) == "commit --append"
    assert command_of(["commit", "--append=false", "-"]) == "commit"
    assert command_of(["merge", "--key=id"]) == "merge"


@pytest.mark.parametrize("example", ["airflow", "dagster"])
def test_examples_retry_what_retryable_says(example: str) -> None:
    """The orchestrator examples decide retries by ``PswapError.retryable`` and
    nothing else: no exit status, no error code, no class list of their own."""
    src = (ROOT / "examples" / example / "pswap_sales.py").read_text()
    code = "\n".join(line.split("#", 1)[0] for line in src.splitlines() if not line.lstrip().startswith(("#", '"""')))
    assert "import pswap" in src and "subprocess" not in src
    assert "e.retryable" in code, f"examples/{example}: no retry decision by e.retryable"
    forbidden = [r"returncode", r"exit_code\s*(==|!=|<|>|in\b|not\b)", r"\.code\s*(==|!=|in\b|not\b)",
                 r"pswap\.(?!PswapError\b)\w+Error"]
    for pattern in forbidden:
        m = re.search(pattern, code)
        assert m is None, f"examples/{example} decides retries by {m.group(0)!r}, not by retryable"
