"""Reading text sources and cutting them into chunks (docs/originals.md §1.12).

Pure and stdlib only: nothing here touches the store. The service reads a source with
:func:`read_source_file`, :func:`read_source_stream` (``ingest -``) or
:func:`source_from_text` (``--text``), then stores one memory per :func:`chunk_text`
chunk.

Why ledger reads so few formats: a chunk is only as good as its text, and ledger bundles
no PDF/Office parsers. Anything else is refused with a message telling the agent which
tool extracts the text and how to pipe it into ``ledger ingest -``.

Chunking invariants (tested, including a Hypothesis property):

* No content is lost: the non-whitespace characters of the input, in order, equal those
  of the chunks joined. Only whitespace between blocks and sentences is rewritten.
* No chunk is empty, and no chunk is longer than ``max_chars`` (plus a heading prefix):
  an over-long sentence is split at line breaks, then at whitespace, then hard. (The seed
  kept it whole, so a 10 MB JSONL file became one 10 MB chunk.)
* A markdown heading starts a chunk and stays attached to the text that follows it.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from typing import BinaryIO

from .errors import InvalidInput, UnreadableSource

READABLE_EXTENSIONS: tuple[str, ...] = (
    "md", "markdown", "txt", "text", "csv", "tsv", "json", "jsonl", "log", "yaml", "yml",
)
#: Formats whose bytes are not their text: refused up front, with the tool to extract
#: it, even when the bytes happen to decode (an RTF or an SVG-less XML office file).
#: Any other file is read when its bytes are UTF-8 text without NUL (a ``.py``, a
#: ``.rst``, an extensionless ``NOTES``): it is ingested as plain text under its name.
NEEDS_PARSER: frozenset[str] = frozenset({
    "pdf", "doc", "docx", "odt", "ods", "odp", "rtf", "xls", "xlsx", "ppt", "pptx", "epub", "pages", "key",
    "numbers", "zip", "gz", "tgz", "bz2", "xz", "7z", "rar", "tar", "png", "jpg", "jpeg", "gif", "webp", "bmp",
    "tiff", "ico", "mp3", "mp4", "wav", "mov", "sqlite", "db",
})
TARGET_CHARS = 900
MAX_CHARS = 1600

#: Kept for callers that imported it; the NUL check now covers the whole input
#: (a NUL past the first 8 KB used to be stored in a chunk, though ``remember``
#: refuses NUL). ``bytes.find`` is a memchr scan: about 10 GB/s, nothing next to
#: chunking.
BINARY_SNIFF_BYTES = 8192

_UTF8_BOM = b"\xef\xbb\xbf"
_PIPE_HINT = "ledger ingest - --cluster <id>"

# A blank line: a newline, optional whitespace (which may hold more newlines), a newline.
_BLANK_LINE = re.compile(r"\n\s*\n")
_HEADING = re.compile(r"#{1,6}\s")
# The whitespace after a sentence end ('.', '!' or '?'). Splitting there, instead of
# matching sentences, means text that is not a sentence (a trailing remainder, "3.14")
# can never fall between matches and be dropped.
_SENTENCE_GAP = re.compile(r"(?<=[.!?])\s+")


# ---------------------------------------------------------------------------- names


def extension(filename: str) -> str:
    """The text after the last ``.`` of the last path segment, lowercased; ``''`` when
    the segment has no dot. ``.bashrc`` gives ``bashrc`` (reference rule, applied
    literally); ``v1.2/README`` gives ``''``. Only a word of at most 10 letters, digits,
    ``+``, ``-`` or ``_`` is an extension: a ``--name`` such as "Notes v2. Final version"
    has none (its tail filled the type column of ``ledger sources``)."""
    name = os.fspath(filename)
    segment = name.replace("\\", "/").rsplit("/", 1)[-1]
    dot = segment.rfind(".")
    ext = segment[dot + 1 :].lower() if dot >= 0 else ""
    return ext if len(ext) <= 10 and all(c.isalnum() or c in "+-_" for c in ext) else ""


# ---------------------------------------------------------------------------- chunking


def chunk_text(text: str, target: int = TARGET_CHARS, max_chars: int = MAX_CHARS) -> list[str]:
    """Cut ``text`` into chunks of about ``target`` characters, at most ``max_chars``.

    1. Split on blank lines; trim blocks and drop empty ones.
    2. A heading block starts a new chunk (unless the current chunk holds only
       headings, so ``# Title`` + ``## Section`` + body stay together).
    3. A block longer than ``max_chars`` is split at sentence ends and the sentences are
       packed greedily up to ``max_chars``; one over-long sentence stays whole.
    4. Otherwise the block joins the current chunk (separated by a blank line) unless
       that would pass ``target``, in which case the current chunk is flushed first.
       Exception: a chunk holding only headings is never flushed for the target, so a
       heading stays attached to its body.

    Whitespace-only text gives ``[]`` (callers reject empty sources before this).
    """
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")

    chunks: list[str] = []
    parts: list[str] = []  # blocks of the current chunk
    size = 0  # len("\n\n".join(parts))
    headings_only = False  # every block in ``parts`` is a heading

    def flush() -> None:
        nonlocal size, headings_only
        if parts:
            chunks.append("\n\n".join(parts))
            parts.clear()
        size = 0
        headings_only = False

    for raw in _BLANK_LINE.split(text):
        block = raw.strip()
        if not block:
            continue
        is_heading = _HEADING.match(block) is not None

        if is_heading and parts and not headings_only:
            flush()

        if len(block) > max_chars:
            # Trigger: a block too long to be a chunk. Why: keep chunks searchable and
            # bounded. Outcome: sentence packing; a pending heading prefixes the first
            # pack when it fits, so it stays attached.
            prefix = "\n\n".join(parts) if headings_only else ""
            if parts and not headings_only:
                flush()
            parts.clear()
            size = 0
            headings_only = False
            _pack_sentences(block, max_chars, prefix, chunks)
            continue

        if parts:
            if headings_only:
                # Attach the body to its heading(s) as long as the chunk stays in max.
                if size + 2 + len(block) > max_chars:
                    flush()
            elif size + len(block) + 2 > target:
                flush()

        if parts:
            size += 2 + len(block)
            headings_only = headings_only and is_heading
        else:
            size = len(block)
            headings_only = is_heading
        parts.append(block)

    flush()
    return chunks


def _pack_sentences(block: str, max_chars: int, prefix: str, out: list[str]) -> None:
    """Append to ``out`` the sentences of ``block`` packed greedily up to ``max_chars``.

    Chunks are slices of ``block``, so whitespace inside a pack (line breaks of a list,
    say) is kept as written. ``prefix`` (pending headings) leads the first pack if the
    heading plus the first sentence fit; otherwise it becomes a chunk of its own.
    """
    # Sentence spans as (start, end) offsets into ``block``; ``block`` is trimmed, so
    # every span is non-empty.
    spans: list[tuple[int, int]] = []
    start = 0
    for gap in _SENTENCE_GAP.finditer(block):
        spans.append((start, gap.start()))
        start = gap.end()
    spans.append((start, len(block)))
    spans = [piece for span in spans for piece in _split_long(block, span, max_chars)]

    lead = ""
    first_start, first_end = spans[0]
    if prefix:
        if len(prefix) + 2 + (first_end - first_start) <= max_chars:
            lead = prefix + "\n\n"
        else:
            out.append(prefix)

    pack_start, pack_end = first_start, first_end
    for s_start, s_end in spans[1:]:
        if len(lead) + (s_end - pack_start) > max_chars:
            out.append(lead + block[pack_start:pack_end])
            lead = ""
            pack_start = s_start
        pack_end = s_end
    out.append(lead + block[pack_start:pack_end])


def _split_long(block: str, span: tuple[int, int], max_chars: int) -> list[tuple[int, int]]:
    """Split a span longer than ``max_chars`` (a table, a code block, a JSONL or log
    file with no sentence ends) at line breaks, and a still-too-long line at its last
    whitespace before the limit (or hard at the limit), so no chunk grows unbounded.
    Only whitespace is ever dropped between pieces."""
    start, end = span
    if end - start <= max_chars:
        return [span]
    out: list[tuple[int, int]] = []
    while end - start > max_chars:
        window = block[start : start + max_chars + 1]
        cut = window.rfind("\n")
        if cut <= 0:
            cut = max(window.rfind(" "), window.rfind("\t"))
        if cut <= 0:
            out.append((start, start + max_chars))
            start += max_chars
        else:
            out.append((start, start + cut))
            start += cut
        while start < end and block[start].isspace():
            start += 1
    if start < end:
        out.append((start, end))
    trimmed = []
    for a, b in out:
        while b > a and block[b - 1].isspace():
            b -= 1
        if b > a:
            trimmed.append((a, b))
    return trimmed


# ---------------------------------------------------------------------------- sources


@dataclass(frozen=True)
class SourceText:
    """Decoded text of one source. ``filename`` is the path as the caller gave it (or
    ``stdin``); ``bytes`` is the size of the file, stream or UTF-8 encoded text."""

    filename: str
    ext: str
    text: str
    bytes: int


def read_source_file(path: str | os.PathLike[str]) -> SourceText:
    """Read a text file: one in :data:`READABLE_EXTENSIONS`, or any other whose bytes
    are UTF-8 text without NUL (read as plain text; its name stays the source's).

    Raises :class:`UnreadableSource` with a message that says what to do instead: for a
    missing file, a directory, a format in :data:`NEEDS_PARSER` ("needs a parser", with
    the tool to extract the text), no permission, a symbolic link loop, an empty file,
    binary content (NUL bytes under any other name, with or without an extension) or
    bytes that are not UTF-8, or more than :data:`MAX_SOURCE_BYTES` (a huge log, or a
    device that never ends: ``/dev/zero``). A UTF-8 BOM is stripped.
    """
    shown = os.fspath(path)
    if not os.path.lexists(shown):
        raise UnreadableSource(
            f"Cannot read {shown}: no such file (relative paths start from {os.getcwd()}). "
            "Check the path, or pass the text itself with --text."
        )
    if os.path.isdir(shown):
        raise UnreadableSource(
            f"Cannot read {shown}: it is a directory. Ingest its files one at a time: "
            f"for f in {shlex.quote(shown.rstrip('/') or '/')}/*.md; do ledger ingest \"$f\" --cluster <id>; done"
        )
    ext = extension(shown)
    if ext in NEEDS_PARSER:
        raise _needs_parser(shown, ext)
    try:
        with open(shown, "rb") as fh:
            data = _read_bounded(fh, shown, shlex.quote(shown))
    except PermissionError:
        raise UnreadableSource(
            f"Cannot read {shown}: permission denied. Make it readable "
            f"(chmod u+r {shlex.quote(shown)}) or ask the user to, then retry."
        ) from None
    except FileNotFoundError:  # removed between the check and the open
        raise UnreadableSource(f"Cannot read {shown}: no such file. Check the path and retry.") from None
    except IsADirectoryError:
        raise UnreadableSource(f"Cannot read {shown}: it is a directory. Ingest its files one at a time.") from None
    except OSError as exc:
        import errno

        if exc.errno == errno.ELOOP:
            # cat would fail the same way: no file is behind the link to extract text from
            raise UnreadableSource(
                f"Cannot read {shown}: it is a symbolic link that leads back to itself (a link loop), so no file "
                f"is behind it. Check where it points (ls -l {shlex.quote(shown)}) and ingest the real file."
            ) from None
        raise UnreadableSource(
            f"Cannot read {shown}: {exc.strerror or exc}. Check the file (ls -l {shlex.quote(shown)}) and retry, "
            "or pass the text itself with --text."
        ) from None

    if not data:
        raise UnreadableSource(f"Cannot read {shown}: file is empty. There is nothing to ingest.")
    # An unlisted name is text if its bytes say so; with NUL bytes _decode says "binary
    # content" (not ".unknown needs a parser": a name without extension names no format).
    text = _decode(data, shown, shlex.quote(shown))
    if not text.strip():
        raise UnreadableSource(f"Cannot read {shown}: file is empty (it holds only whitespace). There is nothing to ingest.")
    return SourceText(filename=shown, ext=ext, text=text, bytes=len(data))


def read_source_stream(stream: BinaryIO, filename: str = "stdin") -> SourceText:
    """Read all of ``stream`` (``ingest -``). The extension is taken from ``filename``
    (``''`` for ``stdin``) and is not checked: piped text is text by definition.

    Raises :class:`InvalidInput` when nothing (or only whitespace) arrives and
    :class:`UnreadableSource` for binary or non-UTF-8 content, or more than
    :data:`MAX_SOURCE_BYTES` (an endless pipe, ``yes | ledger ingest -``).
    """
    if isinstance(stream.read(0), str):  # a text stream handed over by mistake: still text
        data = stream.read(MAX_SOURCE_BYTES + 1)
        if len(data) > MAX_SOURCE_BYTES:
            raise UnreadableSource(_too_big(filename, None))
        return source_from_text(data, filename)
    data = _read_bounded(stream, filename, None)
    if not data:
        raise InvalidInput(_empty_message(filename))
    text = _decode(data, filename, None)
    if not text.strip():
        raise InvalidInput(_empty_message(filename))
    return SourceText(filename=filename, ext=extension(filename), text=text, bytes=len(data))


def source_from_text(text: str, filename: str = "stdin", *, empty: str | None = None) -> SourceText:
    """Wrap inline text (``--text``). A leading BOM is dropped; ``bytes`` is the UTF-8
    size. Raises :class:`InvalidInput` for blank text (with ``empty`` as the message
    when given, so the caller can name where the text came from) or text that cannot
    be encoded (lone surrogates, e.g. from undecodable command-line bytes)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        raise InvalidInput(empty or _empty_message(filename))
    nul = text.find("\x00")
    if nul >= 0:
        raise InvalidInput(
            f"source text contains a NUL character at position {nul}: binary content, not text. "
            f"Extract the text first and pipe it in: pandoc -t plain <file> | {_PIPE_HINT}"
        )
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise InvalidInput(
            f"source text is not valid Unicode (an undecodable character at position {exc.start}). "
            f"Convert it to UTF-8 and pipe it in: iconv -f <encoding> -t utf-8 <file> | {_PIPE_HINT}"
        ) from None
    return SourceText(filename=filename, ext=extension(filename), text=text, bytes=size)


#: Characters: the longest --name a text source may have (a file name, not a document).
MAX_SOURCE_NAME = 255


def text_identity(text: str, name: str | None = None) -> str:
    """The key a text source (``--text``, stdin) is found by when ingested again, kept
    where a file's resolved path goes (``sources.path``; never shown): ``name:<name>``
    when the caller named it, else ``sha256:<hex>`` of the text, so the same text again
    is the same source (an update that changes nothing) instead of a second copy. Real
    paths are absolute, so neither form can equal one."""
    if name:
        return f"name:{name}"
    import hashlib

    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


# ---------------------------------------------------------------------------- helpers


def _empty_message(filename: str) -> str:
    where = "nothing arrived on stdin" if filename == "stdin" else f"nothing to ingest for {filename}"
    return (
        f"source text is empty: {where}. Pipe the text in (e.g. pdftotext doc.pdf - | {_PIPE_HINT}) "
        "or pass it with --text."
    )


#: The most bytes one source may hold: 64 MiB, about a minute of indexing at the
#: ~1 MB/s docs/benchmarks.md measures, and tens of thousands of chunks. Reading stops
#: one byte past it, so a device or pipe that never ends (``/dev/zero``, ``yes |``) is
#: refused instead of filling the memory until Python dies with a MemoryError.
MAX_SOURCE_BYTES = 64 * 1024 * 1024

#: Binary content is recognised from the first block read, before the rest is read.
_SNIFF_BYTES = 64 * 1024


def _read_bounded(fh, shown: str, quoted: str | None) -> bytes:
    """All of the binary stream ``fh``, refused (:class:`UnreadableSource`) past
    :data:`MAX_SOURCE_BYTES`, or as soon as the first block holds a NUL byte (binary:
    ``/dev/urandom`` is refused at once, not after 64 MiB). A regular file larger than
    the limit is refused from its size, before any read."""
    try:
        size = os.fstat(fh.fileno()).st_size
    except (AttributeError, OSError, ValueError):  # not a real file (a test's BytesIO)
        size = 0
    if size > MAX_SOURCE_BYTES:
        raise UnreadableSource(_too_big(shown, quoted, size))
    parts: list[bytes] = []
    total = 0
    while True:
        block = fh.read(min(1 << 20, MAX_SOURCE_BYTES + 1 - total))
        if not block:
            break
        if not parts and b"\x00" in block[:_SNIFF_BYTES]:
            _decode(block[:_SNIFF_BYTES], shown, quoted)  # raises "binary content"
        parts.append(block)
        total += len(block)
        if total > MAX_SOURCE_BYTES:
            raise UnreadableSource(_too_big(shown, quoted))
    return b"".join(parts)


def _too_big(shown: str, quoted: str | None, size: int | None = None) -> str:
    held = f"it holds {size:,} bytes" if size else "more than that arrived"
    split = f"split -C 32m {quoted} part- && for f in part-*; do ledger ingest \"$f\" --cluster <id>; done" if quoted \
        else "split -C 32m <file> part- and ingest each part"
    return (f"Cannot read {shown}: a source may hold at most {MAX_SOURCE_BYTES:,} bytes (64 MiB) and {held}. "
            f"Ingest it in parts: {split}. Nothing was ingested.")


def _decode(data: bytes, shown: str, quoted: str | None) -> str:
    """UTF-8 decode with a BOM stripped; binary or invalid bytes raise
    :class:`UnreadableSource` naming the offset of the first bad byte in ``data``."""
    src = quoted or "<file>"
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise UnreadableSource(
            f"Cannot read {shown}: it is UTF-16 text (byte-order mark at offset 0); ledger reads UTF-8. "
            f"Convert it and pipe it in: iconv -f utf-16 -t utf-8 {src} | {_PIPE_HINT}"
        )
    nul = data.find(b"\x00")
    if nul >= 0:
        kind, tool = _sniff_binary(data, src)
        raise UnreadableSource(
            f"Cannot read {shown}: binary content ({kind}NUL byte at offset {nul}). "
            f"Extract the text yourself and pipe it in: {tool} | {_PIPE_HINT}"
        )
    skip = len(_UTF8_BOM) if data.startswith(_UTF8_BOM) else 0
    try:
        return data[skip:].decode("utf-8") if skip else data.decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = exc.start + skip
        raise UnreadableSource(
            f"Cannot read {shown}: not UTF-8 text (byte 0x{data[offset]:02X} at offset {offset}). "
            f"Convert it to UTF-8 and pipe it in, e.g. for Latin-1: iconv -f latin1 -t utf-8 {src} | {_PIPE_HINT}"
        ) from None


def _sniff_binary(data: bytes, src: str) -> tuple[str, str]:
    """A guess at what a binary payload is, for a better hint: (label, command)."""
    if data.startswith(b"%PDF-"):
        return "a PDF: ", f"pdftotext {src} -"
    if data.startswith(b"PK\x03\x04"):
        return "a zip or Office document: ", f"pandoc -t plain {src}"
    return "", f"pandoc -t plain {src}"


# Which tool to suggest for an extension ledger will not read.
_PDF = {"pdf"}
_CAT = {  # plain text under a name ledger does not list: cat is enough
    "", "py", "js", "ts", "tsx", "jsx", "go", "rs", "java", "c", "h", "cpp", "hpp", "rb", "sh",
    "toml", "ini", "cfg", "conf", "env", "xml", "sql", "css", "scss", "diff", "patch",
}


def _needs_parser(shown: str, ext: str, tool: str | None = None) -> UnreadableSource:
    """The refusal for a format ledger does not read; ``tool`` overrides the extraction
    command guessed from the extension (binary bytes under a text-like name)."""
    return UnreadableSource(
        f"Cannot read {shown}: .{ext or 'unknown'} needs a parser ledger does not bundle. "
        f"Extract the text yourself and pipe it in: {tool or _extract_command(ext, shown)} | {_PIPE_HINT}"
    )


def _extract_command(ext: str, path: str) -> str:
    quoted = shlex.quote(path)
    if ext in _PDF:
        return f"pdftotext {quoted} -"
    if ext in _CAT:
        return f"cat {quoted}"
    return f"pandoc -t plain {quoted}"
