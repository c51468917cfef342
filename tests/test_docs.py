"""The pages a newcomer reads hold: CONTRIBUTING.md's recipes run, and no page links to a file a clone
does not have."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]


def _recipes() -> list[tuple[str, str]]:
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    return [(block.splitlines()[0].removeprefix("# test: "), block) for block in blocks]


RECIPES = _recipes()


def test_every_recipe_is_tested() -> None:
    names = [name for name, _ in RECIPES]
    assert names == ["detector", "framework", "collector", "flag", "table", "figure"]


@pytest.mark.parametrize(("name", "code"), RECIPES, ids=[name for name, _ in RECIPES])
def test_the_recipe_runs(name: str, code: str, tmp_path: Path) -> None:
    namespace = {"__name__": f"contributing_{name}", "tmp_path": tmp_path}
    exec(compile(code, f"CONTRIBUTING.md:{name}", "exec"), namespace)


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_links_point_at_files_a_clone_has(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert "../shared" not in text, f"{page.name} names a folder outside the repository"
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        assert (page.parent / target).exists(), f"{page.name} links to {target}, which a clone lacks"
