"""Bring the repository's tutorials and notebooks into the site.

Sphinx only reads files under ``docs/``, but the tutorials (``tutorials/<name>/README.md``)
and the notebooks (``notebooks/<name>.ipynb``) live at the top of the repository, next to
the code they go with. Before Sphinx looks for its sources (``builder-inited``), this
extension fills two generated folders, which ``docs/.gitignore`` keeps out of git:

* ``docs/tutorials/<name>.md``: a copy of each ``tutorials/<name>/README.md``, its relative
  links translated so that they work from the site (see ``readme_links.py``);
* ``docs/tutorials/_overview.md``: ``tutorials/README.md`` (the course's introduction) without
  its title, for ``tutorials.md`` to include above the list of exercises;
* ``docs/notebooks/<name>.ipynb``: a copy of each notebook.

The section pages ``tutorials.md`` and ``notebooks.md`` list these folders with a toctree
glob, so a new tutorial or notebook appears on the site without editing anything here.

A source folder that does not exist yet (or holds nothing to show yet) is not an error: its
section gets one page saying so, and the build log says so too. Anything else is an error:
an unreadable README stops the build here, and a README or notebook that does not parse
fails it through Sphinx's warnings (``-W``).
"""
from __future__ import annotations

import shutil
from pathlib import Path

from sphinx.util import logging

from readme_links import rewrite_readme

logger = logging.getLogger(__name__)

PLACEHOLDER = "coming-soon"
OVERVIEW = "_overview.md"  # excluded from the sources in conf.py: only included


def tutorial_readmes(repo: Path) -> list[Path]:
    """``tutorials/<name>/README.md`` for every tutorial folder, sorted by name.

    Folders whose names start with ``_`` or ``.`` hold shared helpers, not tutorials, and
    a folder without a README is not (yet) a tutorial: both are left out."""
    root = repo / "tutorials"
    if not root.is_dir():
        return []
    folders = sorted(p for p in root.iterdir() if p.is_dir() and p.name[0] not in "_.")
    return [f / "README.md" for f in folders if (f / "README.md").is_file()]


def notebook_files(repo: Path) -> list[Path]:
    """``notebooks/*.ipynb``, sorted by name."""
    root = repo / "notebooks"
    return sorted(root.glob("*.ipynb")) if root.is_dir() else []


def write_tutorial_pages(readmes: list[Path], out: Path) -> None:
    docs = out.parent
    pages = {readme.resolve(): readme.parent.name for readme in readmes}
    pages[(docs.parent / "tutorials" / "README.md").resolve()] = "../tutorials"  # the overview
    for readme in readmes:
        text = readme.read_text(encoding="utf-8")  # unreadable or not UTF-8: stop, loudly
        source = readme.relative_to(docs.parent).as_posix()
        header = (f"<!-- A copy of {source}, made by docs/_ext/collect_sources.py on every "
                  "build: edit that file, not this one. -->\n\n")
        body = rewrite_readme(text, readme, out, docs, pages)
        (out / f"{readme.parent.name}.md").write_text(header + body, encoding="utf-8")


def write_tutorials_overview(repo: Path, readmes: list[Path], out: Path) -> None:
    """``tutorials/README.md``, its title dropped (the page has its own) and its links made to
    work from ``docs/tutorials.md``, which includes it; an empty file if there is none."""
    overview = repo / "tutorials" / "README.md"
    text = ""
    if overview.is_file():
        lines = overview.read_text(encoding="utf-8").splitlines(keepends=True)
        if lines and lines[0].startswith("# "):
            lines = lines[1:]
        pages = {readme.resolve(): f"tutorials/{readme.parent.name}" for readme in readmes}
        pages[overview.resolve()] = "tutorials"
        text = rewrite_readme("".join(lines), overview, out.parent, out.parent, pages)
    (out / OVERVIEW).write_text(text, encoding="utf-8")


def write_placeholder(out: Path, title: str, text: str) -> None:
    (out / f"{PLACEHOLDER}.md").write_text(f"# {title}\n\n{text}\n", encoding="utf-8")


def fresh_folder(path: Path) -> Path:
    """An empty ``path``: pages of tutorials or notebooks deleted since the last build go."""
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def collect(app) -> None:
    docs = Path(app.srcdir)
    repo = docs.parent

    out = fresh_folder(docs / "tutorials")
    readmes = tutorial_readmes(repo)
    write_tutorial_pages(readmes, out)
    write_tutorials_overview(repo, readmes, out)
    if not readmes:
        logger.info("collect_sources: no tutorials/<name>/README.md yet; "
                    "the Tutorials section says so")
        write_placeholder(
            out, "Tutorials: not written yet",
            "No tutorial was found (`tutorials/<name>/README.md`) when this site was built. "
            "Each tutorial appears here as soon as its folder has a README.")

    out = fresh_folder(docs / "notebooks")
    notebooks = notebook_files(repo)
    for nb in notebooks:
        shutil.copyfile(nb, out / nb.name)
    if not notebooks:
        logger.info("collect_sources: no notebooks/*.ipynb yet; the Notebooks section says so")
        write_placeholder(
            out, "Notebooks: not written yet",
            "No notebook was found (`notebooks/*.ipynb`) when this site was built. "
            "Each notebook appears here as soon as it is added to `notebooks/`.")


def setup(app):
    app.connect("builder-inited", collect)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
