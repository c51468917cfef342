"""A command's ``cd``, ``pushd`` and ``popd`` move where the scripts it runs are found.

Property tests: whatever the folder names, ``cd D && python S`` runs ``D/S`` (as ``python D/S`` does),
moves that come back leave the script at the root, a subshell's move ends with it, and no command
text makes ``scripts_run`` fail or name a file its revision does not hold.
"""

from __future__ import annotations

import shlex

from hypothesis import given
from hypothesis import strategies as st

from arb_audit.analyzer.scripts_run import scripts_run
from arb_audit.model import Command, FileEntry, Revision

NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_- .", min_size=1, max_size=12).filter(
    lambda n: n.strip(".") != "" and not n.startswith("-") and n.strip() == n
)
FOLDERS = st.lists(NAMES, min_size=1, max_size=3).map("/".join)
SCRIPTS = NAMES.map(lambda n: n.replace(".", "_") + ".py")


def _ran(command: str, *paths: str) -> list[str]:
    """Return the paths of the scripts ``command`` ran, in a revision holding ``paths``."""
    files = [FileEntry(p, 1, f"{i:040x}") for i, p in enumerate(paths)]
    return [
        r.path
        for r in scripts_run([Command(1, command, "Bash")], [Revision(1, "a" * 40, None, "command", files)])
    ]


@given(FOLDERS, SCRIPTS)
def test_a_script_run_after_cd_is_the_one_in_that_folder(folder: str, script: str) -> None:
    inner = f"{folder}/{script}"
    assert _ran(f"cd {shlex.quote(folder)} && python {shlex.quote(script)}", script, inner) == [inner]
    assert _ran(f"python {shlex.quote(inner)}", script, inner) == [inner]
    assert _ran(f"pushd {shlex.quote(folder)}; python {shlex.quote(script)}", script, inner) == [inner]


@given(FOLDERS, SCRIPTS, st.lists(NAMES, min_size=1, max_size=3).map("/".join))
def test_an_absolute_cd_is_followed_by_its_tail(folder: str, script: str, prefix: str) -> None:
    inner = f"{folder}/{script}"
    command = f"cd {shlex.quote('/' + prefix + '/' + folder)}; python {shlex.quote(script)}"
    assert _ran(command, script, inner) == [inner]


@given(FOLDERS, SCRIPTS)
def test_moves_that_come_back_leave_the_script_at_the_root(folder: str, script: str) -> None:
    inner, d, s = f"{folder}/{script}", shlex.quote(folder), shlex.quote(script)
    ups = "/".join([".."] * len(folder.split("/")))
    for command in (
        f"cd {d} && cd - && python {s}",
        f"pushd {d} && popd && python {s}",
        f"cd {d} && cd {ups} && python {s}",
        f"(cd {d} && ls); python {s}",
    ):
        assert _ran(command, script, inner) == [script], command


@given(FOLDERS, SCRIPTS)
def test_an_unknown_directory_falls_back_to_the_scripts_own_words(folder: str, script: str) -> None:
    inner = f"{folder}/{script}"
    assert _ran(f"cd ~ && python {shlex.quote(script)}", script, inner) == [script]
    assert _ran(f'cd "$WORK" && python {shlex.quote(script)}', script, inner) == [script]
    # Nothing at the moved-to place: the file its words name, as before cd was followed.
    assert _ran(f"cd {shlex.quote(folder)} && python {shlex.quote(script)}", script) == [script]


@given(st.text(max_size=200))
def test_no_command_text_breaks_it_or_names_a_file_the_revision_lacks(command: str) -> None:
    paths = ("train.py", "sub/train.py", "run.sh")
    assert set(_ran(command, *paths)) <= set(paths)
