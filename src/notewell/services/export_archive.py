"""An export as one file: the folder of export_format.py in a tar archive (``notewell export FILE.tar``).

The archive holds the folder's files flat, the tables first and the manifest last, each member owned by
no one, dated 0 and private (0600), so the same store's export gives the same bytes whenever it is made.
Reading one back takes only what an export writes: regular files named ``manifest.json`` or
``<table>.jsonl``, each once, extracted by name into a folder of its own (never a path from the archive),
and then imported as a folder is.
"""

from __future__ import annotations

import os
import re
import shutil
import tarfile
from pathlib import Path

from notewell.errors import InvalidArgument, file_refusal
from notewell.scratch_files import part_path, remove_stale_parts
from notewell.services.export_format import MANIFEST

SUFFIX = ".tar"
_MEMBER = re.compile(r"[a-z][a-z0-9_]*\.jsonl")


def is_archive(path: Path) -> bool:
    """An export or import path that names one file rather than a folder."""
    return path.name.endswith(SUFFIX) or path.is_file()


def pack(folder: Path, archive: Path) -> None:
    """``folder`` (an export) into ``archive``, which must not exist; written whole, then renamed into place."""
    if archive.exists():
        raise InvalidArgument("export", f"{archive} exists already; name a new file")
    remove_stale_parts(archive.parent)  # a killed export's (scratch_files.py)
    scratch = part_path(archive)
    names = [*sorted(p.name for p in folder.iterdir() if p.name != MANIFEST), MANIFEST]
    try:
        fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # it holds every home's memories
    except OSError as exc:
        raise InvalidArgument("export", f"cannot create {scratch} ({exc.strerror}); name another file") from None
    try:
        with os.fdopen(fd, "wb") as out:
            with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
                for name in names:
                    info = tar.gettarinfo(folder / name, arcname=name)
                    info.mtime, info.mode, info.uid, info.gid, info.uname, info.gname = 0, 0o600, 0, 0, "", ""
                    with (folder / name).open("rb") as data:
                        tar.addfile(info, data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(scratch, archive)
    finally:
        scratch.unlink(missing_ok=True)


def unpack(archive: Path, folder: Path) -> None:
    """The files of an export's ``archive`` into ``folder`` (empty), refusing any member an export never holds."""
    seen: set[str] = set()
    try:
        with tarfile.open(archive, mode="r:") as tar:
            for member in tar:
                _extract(tar, member, folder, seen)
    except (OSError, tarfile.TarError) as exc:
        raise InvalidArgument("import", f"{archive} is not an export's archive, or is damaged ({exc}); name the "
                                        ".tar file 'notewell export' wrote, or its folder") from None
    if MANIFEST not in seen:
        raise InvalidArgument("import", f"{archive} holds no {MANIFEST}; it was cut short: export again")


_KINDS = {tarfile.SYMTYPE: "symbolic link", tarfile.LNKTYPE: "hard link", tarfile.DIRTYPE: "folder"}


def _extract(tar: tarfile.TarFile, member: tarfile.TarInfo, folder: Path, seen: set[str]) -> None:
    name = member.name
    if name in seen:
        why = " twice"
    elif not member.isfile():
        why = f" as a {_KINDS.get(member.type, 'special file')}, not a file"
    elif not (name == MANIFEST or _MEMBER.fullmatch(name)):
        why = ", which no export writes"
    else:
        why = ""
    if why:
        raise InvalidArgument("import", f"the archive holds {name!r}{why}; import only what 'notewell export' wrote")
    seen.add(name)
    source = tar.extractfile(member)
    assert source is not None  # a regular file's member always has its data
    with source:
        try:  # a refusal of the scratch folder's disk is the disk's, not a damaged archive
            with (folder / name).open("xb") as out:
                shutil.copyfileobj(source, out, 1 << 20)
        except OSError as exc:
            refused = file_refusal("import", folder.parent, exc) if exc.filename is None or \
                Path(str(exc.filename)).parent == folder else None
            if refused is None:
                raise
            raise refused from None
