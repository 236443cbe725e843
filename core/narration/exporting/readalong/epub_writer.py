"""Writing an EPUB's archive as a stream: ``mimetype`` first and stored, members copied without inflating them all
at once, large audio stored (it does not compress), all under a temporary name renamed into place when complete."""

from __future__ import annotations

import contextlib
import shutil
import zipfile
from pathlib import Path
from typing import IO

_BLOCK = 1 << 20
STORED_SUFFIXES = (".mp3", ".m4a", ".mp4", ".jpg", ".jpeg", ".png", ".gif", ".webp", ".woff", ".woff2")


class PackageWriter:
    def __init__(self, path: Path):
        self.zip = zipfile.ZipFile(path, "w", allowZip64=True)
        self.names: set[str] = set()
        self.add_bytes("mimetype", b"application/epub+zip", compress=False)

    def add_bytes(self, name: str, data: bytes, compress: bool = True) -> None:
        info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
        info.external_attr = 0o644 << 16
        self.zip.writestr(info, data)
        self.names.add(name)

    def add_file(self, name: str, path: Path) -> None:
        info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_STORED if name.lower().endswith(STORED_SUFFIXES) else zipfile.ZIP_DEFLATED
        info.external_attr = 0o644 << 16
        info.file_size = path.stat().st_size
        with path.open("rb") as source, self.zip.open(info, "w", force_zip64=info.file_size > 1 << 30) as target:
            shutil.copyfileobj(source, target, _BLOCK)
        self.names.add(name)

    def copy(self, archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> None:
        """A member of another archive, byte for byte (inflated and deflated again in blocks)."""
        new = zipfile.ZipInfo(info.filename, date_time=info.date_time)
        new.compress_type, new.external_attr, new.comment = info.compress_type, info.external_attr, info.comment
        new.file_size = info.file_size
        source: IO[bytes]
        with archive.open(info) as source, self.zip.open(new, "w", force_zip64=info.file_size > 1 << 30) as target:
            shutil.copyfileobj(source, target, _BLOCK)
        self.names.add(info.filename)

    def close(self) -> None:
        self.zip.close()

    def abandon(self) -> None:
        with contextlib.suppress(OSError, ValueError, zipfile.BadZipFile):  # the file is being thrown away
            self.zip.close()
