"""Every repository path that a project file names must exist in the repository (a user's clone
has nothing beside it): markdown links ``[text](path#anchor)`` in README.md, docs/ and the other
Markdown files (with the anchor checked against the target's headings), and backticked paths
(``path/file.ext``) in those files and in the docstrings and comments of the code."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from conftest import REPO

EXTS = "py|md|json|jsonl|yaml|yml|sh|toml|txt|png|pt|csv|cfg|ini"
# a backticked relative path with a directory part: `docs/rules.md`, ``tests/golden/x.json``
BACKTICKED = re.compile(rf"`{{1,2}}((?:\.\./|\./)?[\w.-]+(?:/[\w.-]+)+\.(?:{EXTS}))(?::\w+)?`{{1,2}}")
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
# paths a program writes or a user supplies, not files of the repository
GENERATED = ("runs/", "DIR/", "_dir/", "out/", "OUT/", "/tmp/", "path/to/")


def _tracked() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                             capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("git is not available to list the repository's files")
    return [REPO / p for p in out.splitlines() if (REPO / p).is_file()]


FILES = _tracked()
MARKDOWN = [p for p in FILES if p.suffix == ".md"]
CODE = [p for p in FILES if p.suffix in (".py", ".sh", ".yaml", ".toml") and p.name != Path(__file__).name]


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    h = re.sub(r"[`*_]", "", heading.strip().lower())
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def _anchors(md: Path) -> set[str]:
    text = md.read_text(encoding="utf-8")
    text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    return {_slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.*?)\s*#*\s*$", text, flags=re.M)}


def _resolves(src: Path, target: str) -> bool:
    """A relative path exists from the file's folder or from the repository root."""
    target = target.lstrip("./") if target.startswith("./") else target
    return (src.parent / target).resolve().exists() or (REPO / target).exists()


def _skip(path: str) -> bool:
    return any(g in path for g in GENERATED) or any(c in path for c in "<>{}*$") or "NN" in path


def _comments_and_docstrings(text: str, suffix: str) -> str:
    """The prose of a code file: Python docstrings and strings, and comments (``#``)."""
    if suffix != ".py":
        return "\n".join(ln.split("#", 1)[1] for ln in text.splitlines() if "#" in ln) if suffix == ".sh" else text
    import ast
    import io
    import tokenize

    parts = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                parts.append(tok.string)
            elif tok.type == tokenize.STRING:
                try:
                    v = ast.literal_eval(tok.string)
                except (ValueError, SyntaxError):
                    continue
                if isinstance(v, str):
                    parts.append(v)
    except tokenize.TokenError:
        return text
    return "\n".join(parts)


def _md_problems(md: Path, text: str) -> list[str]:
    out = []
    rel = md.relative_to(REPO)
    for m in LINK.finditer(text):
        target = m.group(1)
        if re.match(r"^[a-z]+:", target):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        dest = md if not path else (md.parent / path).resolve()
        if path and not dest.exists():
            out.append(f"{rel}: link to {target!r}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            out.append(f"{rel}: link to {target!r}: no heading with that anchor in {dest.name}")
    for m in BACKTICKED.finditer(text):
        if not _skip(m.group(1)) and not _resolves(md, m.group(1)):
            out.append(f"{rel}: names `{m.group(1)}`, which is not in the repository")
    return out


def _code_problems(f: Path, text: str) -> list[str]:
    prose = _comments_and_docstrings(text, f.suffix)
    return [f"{f.relative_to(REPO)}: names `{m.group(1)}`, which is not in the repository"
            for m in BACKTICKED.finditer(prose) if not _skip(m.group(1)) and not _resolves(f, m.group(1))]


def test_every_named_path_exists():
    problems = [p for md in MARKDOWN for p in _md_problems(md, md.read_text(encoding="utf-8"))]
    problems += [p for f in CODE for p in _code_problems(f, f.read_text(encoding="utf-8"))]
    assert not problems, "\n".join(sorted(set(problems)))


def test_the_checker_sees_broken_links_and_paths():
    md = REPO / "docs" / "example.md"  # not a real file: only where the links are resolved from
    text = ("[ok](rules.md#8-rules-knobs) [x](nowhere.md) [r](rules.md#no-such-heading) [w](https://example.org) "
            "`docs/missing.md` `docs/deal-record.md` `runs/main_job/report.md`")
    assert sorted(_md_problems(md, text)) == [
        "docs/example.md: link to 'nowhere.md': no such file",
        "docs/example.md: link to 'rules.md#no-such-heading': no heading with that anchor in rules.md",
        "docs/example.md: names `docs/missing.md`, which is not in the repository",
    ]
    code = REPO / "blot_env" / "example.py"
    src = 'x = 1  # see `spec/deal-record.md`\ndef f():\n    """Writes ``tests/golden/nope.json``."""\n'
    assert sorted(_code_problems(code, src)) == [
        "blot_env/example.py: names `spec/deal-record.md`, which is not in the repository",
        "blot_env/example.py: names `tests/golden/nope.json`, which is not in the repository",
    ]
