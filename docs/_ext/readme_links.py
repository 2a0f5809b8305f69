"""Rewrite the relative links of a tutorial's README for its copy on the site.

A README is written to be read in the repository, next to its files: ``[the stub](stub.py)``,
``[next](../02-depth/README.md)``. On the site its copy lives in ``docs/tutorials/``, so
each relative link target is translated:

* another tutorial's README (``../<name>/README.md#anchor``) -> that tutorial's page;
* a page of the site (``../../docs/concepts/signatures.md``) -> that page;
* any other file of the repository (``stub.py``, ``figure.png``) -> the file itself, as a
  download (images are shown in place).

Targets with a scheme (``https:``), anchors within the page (``#steps``) and links inside
code are left alone, and so is a target that does not exist: Sphinx then reports it, and the
build fails, as it should for a broken link.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

# [text](target "title") and ![alt](target), and reference definitions "[label]: target"
INLINE = re.compile(r"(?P<head>!?\[[^\]]*\]\()(?P<target>[^)\s]+)(?P<tail>(?:\s+\"[^\"]*\")?\))")
DEFINITION = re.compile(r"^(?P<head>\s{0,3}\[[^\]]+\]:\s+)(?P<target>\S+)(?P<tail>.*)$")
FENCE = re.compile(r"^\s{0,3}(```|~~~)")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
PAGES = (".md", ".rst", ".ipynb")  # source files of the site


def rewrite_readme(text: str, readme: Path, page_dir: Path, docs: Path,
                   tutorial_pages: dict) -> str:
    """``text`` (the README at ``readme``) with its relative links made to work from a page
    in ``page_dir``. ``tutorial_pages`` maps each tutorial README's resolved path to the
    name of its page in ``page_dir``."""
    def translate(match, is_image: bool) -> str:
        target = match.group("target")
        if target.startswith("#") or SCHEME.match(target) or target.startswith("/"):
            return match.group(0)
        path_text, _, anchor = target.partition("#")
        resolved = (readme.parent / path_text).resolve()
        suffix = f"#{anchor}" if anchor else ""
        if resolved in tutorial_pages:
            new = f"{tutorial_pages[resolved]}.md{suffix}"
        elif resolved.is_file() and _inside(resolved, docs) and resolved.suffix in PAGES:
            new = _relative(resolved, page_dir) + suffix
        elif resolved.is_file():
            new = _relative(resolved, page_dir)
            if not is_image:
                new = f"path:{new}"  # MyST: a download link to the file
        else:
            return match.group(0)  # broken: let Sphinx report it
        return match.group("head") + new + match.group("tail")

    out = []
    in_code = False
    for line in text.splitlines(keepends=True):
        if FENCE.match(line):
            in_code = not in_code
        if in_code:
            out.append(line)
            continue
        line = INLINE.sub(lambda m: translate(m, m.group("head").startswith("!")), line)
        line = DEFINITION.sub(lambda m: translate(m, False), line)
        out.append(line)
    return "".join(out)


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder.resolve())
        return True
    except ValueError:
        return False


def _relative(path: Path, page_dir: Path) -> str:
    return Path(os.path.relpath(path, page_dir.resolve())).as_posix()
