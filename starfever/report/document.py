"""A tiny document model rendered to both Markdown and HTML, so the two never disagree."""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Heading:
    level: int
    text: str


@dataclass(frozen=True)
class Paragraph:
    text: str


@dataclass(frozen=True)
class Table:
    header: list[str]
    rows: list[list[str]]
    numeric: list[bool]
    """Per column: right-align it (all its cells are numbers)."""


@dataclass(frozen=True)
class Image:
    path: str
    caption: str


Block = Heading | Paragraph | Table | Image
STYLE = ("body{font-family:system-ui,sans-serif;max-width:960px;margin:2em auto;padding:0 1em;"
         "color:#222}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;"
         "padding:.25em .6em}td.num{text-align:right;font-variant-numeric:tabular-nums}"
         "th{background:#f4f4f4}img{max-width:100%}")


@dataclass
class Document:
    """Blocks in order: headings, paragraphs, tables and images."""

    title: str
    blocks: list[Block] = field(default_factory=list)
    lang: str = "en"
    """The language of the text (the HTML page's ``lang``)."""

    def heading(self, text: str, level: int = 2) -> None:
        """Add a section heading."""
        self.blocks.append(Heading(level, text))

    def paragraph(self, text: str) -> None:
        """Add a paragraph of plain text."""
        self.blocks.append(Paragraph(text))

    def table(self, header: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
        """Add a table; columns of numbers are right-aligned."""
        cells = [[str(c) for c in row] for row in rows]
        numeric = [bool(cells) and all(_looks_numeric(r[i]) for r in cells)
                   for i in range(len(header))]
        self.blocks.append(Table(list(header), cells, numeric))

    def image(self, path: str, caption: str) -> None:
        """Add an image (a path relative to the document)."""
        self.blocks.append(Image(path, caption))

    def markdown(self) -> str:
        """The document as GitHub-flavoured Markdown."""
        out = [f"# {self.title}", ""]
        for block in self.blocks:
            if isinstance(block, Heading):
                out += ["#" * block.level + " " + block.text, ""]
            elif isinstance(block, Paragraph):
                out += [block.text, ""]
            elif isinstance(block, Table):
                out.append("| " + " | ".join(block.header) + " |")
                out.append("|" + "|".join("---:" if n else "---" for n in block.numeric) + "|")
                out += ["| " + " | ".join(row) + " |" for row in block.rows]
                out.append("")
            else:
                out += [f"![{block.caption}]({block.path})", ""]
        return "\n".join(out)

    def html(self) -> str:
        """The document as one HTML page (images linked beside it)."""
        esc = html.escape
        body = [f"<h1>{esc(self.title)}</h1>"]
        for block in self.blocks:
            if isinstance(block, Heading):
                body.append(f"<h{block.level}>{esc(block.text)}</h{block.level}>")
            elif isinstance(block, Paragraph):
                body.append(f"<p>{esc(block.text)}</p>")
            elif isinstance(block, Table):
                head = "".join(f"<th>{esc(h)}</th>" for h in block.header)
                rows = "".join(
                    "<tr>" + "".join(f'<td class="{"num" if n else ""}">{esc(c)}</td>'
                                     for c, n in zip(row, block.numeric, strict=False))
                    + "</tr>" for row in block.rows)
                body.append(f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")
            else:
                body.append(f'<figure><img src="{esc(block.path)}" alt="{esc(block.caption)}">'
                            f"<figcaption>{esc(block.caption)}</figcaption></figure>")
        return (f"<!doctype html><html lang='{self.lang}'><head><meta charset='utf-8'>"
                f"<title>{esc(self.title)}</title><style>{STYLE}</style></head><body>"
                + "\n".join(body) + "</body></html>\n")


def _looks_numeric(text: str) -> bool:
    cleaned = text.replace(",", "").replace("%", "").replace("1 in ", "").strip()
    try:
        float(cleaned)
    except ValueError:
        return False
    return True
