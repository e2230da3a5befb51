"""A text argument given as '-': standard input, read whole as UTF-8.

Read as bytes and decoded here, so that bytes that are not UTF-8 are refused naming the argument and the first
bad byte (a text stream raised UnicodeDecodeError from inside the command, which ended as an internal error, exit
70). Line breaks are read as the text stream read them (CRLF and CR become LF)."""

from __future__ import annotations

import typer

from notewell.errors import InvalidArgument


def text_or_stdin(value: str, field: str = "content") -> str:
    """``value``, or all of standard input when it is '-'; InvalidArgument naming ``field`` when that is not UTF-8."""
    if value != "-":
        return value
    text = decoded(typer.get_binary_stream("stdin").read(), field)
    return text.replace("\r\n", "\n").replace("\r", "\n")


def decoded(data: bytes, field: str) -> str:
    """``data`` read from standard input as UTF-8 text; InvalidArgument naming ``field`` and the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise InvalidArgument(field, f"standard input is not UTF-8 text (byte 0x{data[err.start]:02x} at offset "
                                     f"{err.start}); convert it first, e.g. iconv -f LATIN1 -t UTF-8") from None
