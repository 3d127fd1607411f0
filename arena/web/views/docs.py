"""The bot author's documents from the repository's ``docs/`` folder as pages (``/docs/protocol/``:
the protocol, the rules, how bots are packaged), so that the site links to the contract itself and
it reads the same as in the repository. Rendered with markdown-it (CommonMark, raw HTML off)."""

from __future__ import annotations

import functools
import re
from pathlib import Path

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.safestring import mark_safe
from markdown_it import MarkdownIt

#: The documents served, by slug: ``docs/<slug>.md``.
DOCUMENTS = ("protocol", "rules", "bots")
_DOCS = Path(settings.BASE_DIR) / "docs"
_MD_LINK = re.compile(r'href="(?:\./)?(' + "|".join(DOCUMENTS) + r')\.md(#[^"]*)?"')


def document_page(request: HttpRequest, slug: str) -> HttpResponse:
    if slug not in DOCUMENTS:
        raise Http404(f"no document {slug!r}")
    path = _DOCS / f"{slug}.md"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise Http404(f"docs/{slug}.md is not in this installation") from None
    body, title = _rendered(text, path.stat().st_mtime)
    return render(request, "arena/document.html", {"body": mark_safe(body), "title": title,
                                                   "slug": slug})


@functools.lru_cache(maxsize=16)
def _rendered(text: str, mtime: float) -> tuple[str, str]:
    """The document as HTML (links between the documents pointed at their pages) and its first
    heading."""
    html = MarkdownIt("commonmark", {"html": False}).enable("table").render(text)
    html = _MD_LINK.sub(lambda m: f'href="/docs/{m.group(1)}/{m.group(2) or ""}"', html)
    heading = next((line.lstrip("# ").strip() for line in text.splitlines()
                    if line.startswith("# ")), "Documentation")
    return html, heading
