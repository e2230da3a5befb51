"""The limits the knowledge and notes tools enforce, in one place.

The services enforce them and getDocs (and the generated tool pages) quote them from here, so the
documentation cannot drift from the behaviour.
"""

from __future__ import annotations

from typing import Final

from notewell.config import DEFAULT_MAX_FILE_BYTES
from notewell.paths import PATH_MAX_CHARS
from notewell.search.engine import DEFAULT_SCAN_BUDGET_S, MAX_LINE_CHARS, MAX_QUERY_CHARS

QUERY_MIN_CHARS: Final = 2
"""searchKnowledge and searchBrain refuse a shorter query as invalid arguments."""

QUERY_MAX_CHARS: Final = MAX_QUERY_CHARS
"""Every document search (searchKnowledge, searchBrain, search_notes, notewell search) refuses a longer query
as invalid arguments, before any work is done."""

PATH_MAX: Final = PATH_MAX_CHARS
"""A path argument (readDoc, listDocs, search_notes, the memory tools) longer than this is refused."""

SEARCH_MAX_RESULTS: Final = 40
"""searchKnowledge and searchBrain return at most this many results, one per file."""

BRAIN_PARENT_LEVELS: Final = 3
"""searchBrain with includeParents climbs at most this many parent brains."""

NOTES_LIMIT_DEFAULT: Final = 20
NOTES_LIMIT_MAX: Final = 100
"""search_notes: matches per page (at least 1)."""

NOTES_OFFSET_MAX: Final = 9007199254740991
"""search_notes: the largest offset (JSON's largest safe integer)."""

LIST_DOCS_MAX: Final = 1000
"""listDocs returns at most this many documents a call (limit); offset pages through the rest."""

BRAIN_DOCUMENTS_MAX: Final = 1000
"""getBrain (MCP and REST) lists at most this many of a brain's documents, brain.md's first; listDocs over the
brain's folder pages through the rest. Reading every document of a folder of 20,000 made getBrain 385 ms."""

LIST_DOCS_DEFAULT: Final = 150
"""listDocs' page without a limit: about 28 KB of JSON at 190 bytes a document (the 1 GB vault's average),
where 1,000 were 188 KB, some 47,000 tokens of an agent's context."""

READ_DOC_LINES_DEFAULT: Final = 200
READ_DOC_LINES_MAX: Final = 2000
"""readDoc: lines per part."""

READ_DOC_MAX_BYTES: Final = 24 * 1024
"""readDoc: a part's text is at most this many bytes as JSON (UTF-8, escapes counted); a part ends early rather
than exceed it, so the whole answer stays within notewell.answer_bound.ANSWER_BYTES_MAX."""

READ_DOC_TITLE_BYTES_MAX: Final = 1024
"""readDoc: a part's title is at most this many bytes as JSON, the rest of the answer's bound being its text's: a
title as long as the bound (a heading of 12,000 characters) cut the text of every part of line 1 so that some of
it could be read by no call."""

READ_DOC_COLUMN_MAX: Final = 1 << 30
"""readDoc: the character of a line a part may start at (a line longer than READ_DOC_MAX_BYTES comes in pieces);
above any line an indexed file can hold, whatever [index] max_file_bytes is set to."""

MAX_FILE_BYTES: Final = DEFAULT_MAX_FILE_BYTES
"""Files larger than this are not indexed (a vault's notewell.toml may set another value)."""

SNIPPET_MAX_CHARS: Final = MAX_LINE_CHARS
"""A longer matching line is cut to this many characters around the match."""

SCAN_BUDGET_S: Final = DEFAULT_SCAN_BUDGET_S
"""A search stops after this long, planning included (a pattern with no literal text at all, such as
``\\d+``, reads every document in scope until then); its answer says it is incomplete."""
