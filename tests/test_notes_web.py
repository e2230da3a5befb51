"""The web pages for writing: a document's history (its writes with their diffs, undo for those who may write)
and the plain editor (the version held in the form; a conflict shows both texts), over real HTTP with a
signed-in browser session (httpx: the form posts a browser sends, CSRF token included)."""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from html import unescape
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_world import World, serve_world
from notes_world import build_notes_world
from notewell.access.principal import LOCAL_OWNER
from notewell.services.note_edits import Edit
from web_world import csrf_of, email

PASSWORD = "a long pass phrase"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    built = build_notes_world(tmp_path_factory.mktemp("notes-web"))
    for handle in ("admin", "alice", "bob"):
        built.runtime.sign_in.set_password(built.runtime.authentication.acting_as(None), email(handle), PASSWORD)
    yield built
    built.runtime.close()


@pytest.fixture(scope="module")
def base(world: World) -> Iterator[str]:
    with serve_world(world) as server:
        yield f"http://127.0.0.1:{server.port}"


@contextmanager
def browser(base: str, handle: str) -> Iterator[httpx.Client]:
    """A client signed in as ``handle`` with a password, as a browser is (its session cookie kept)."""
    with httpx.Client(base_url=base, follow_redirects=True, timeout=30) as client:
        form = client.get("/signin").text
        signed = client.post("/signin", data={"csrf": csrf_of(form), "email": email(handle), "password": PASSWORD,
                                              "next": "/projects"})
        assert signed.status_code == 200, signed.text
        yield client


def test_edit_then_history_then_undo(world: World, base: str) -> None:
    note = world.vault / "projects/apollo/web.md"
    note.write_bytes(b"# Web\r\n\r\nfirst line\r\n")
    world.runtime.indexing.sync_paths(["projects/apollo/web.md"])
    with browser(base, "alice") as alice:
        doc = alice.get("/p/projects/doc/apollo/web.md").text
        assert 'href="/p/projects/edit/apollo/web.md"' in doc and 'href="/p/projects/history/apollo/web.md"' in doc
        editor = alice.get("/p/projects/edit/apollo/web.md").text
        version = re.search(r'name="version" value="([0-9a-f]{16})"', editor)
        assert version
        unchanged = alice.post("/p/projects/edit/apollo/web.md", data={
            "csrf": csrf_of(editor), "version": version.group(1), "content": "# Web\r\n\r\nfirst line\r\n"})
        assert "Nothing changed: apollo/web.md was not written" in unchanged.text
        saved = alice.post("/p/projects/edit/apollo/web.md", data={
            "csrf": csrf_of(editor), "version": version.group(1),
            "content": "# Web\r\n\r\nfirst line\r\nsecond line\r\n"})
        assert saved.status_code == 200 and "Saved apollo/web.md" in saved.text
        assert note.read_bytes() == b"# Web\r\n\r\nfirst line\r\nsecond line\r\n"
        assert "+second line" in unescape(saved.text)  # the history page shows the write's diff
        assert "(@alice) through web editor" in unescape(saved.text) or "by @alice through" in unescape(saved.text)
        stale = alice.post("/p/projects/edit/apollo/web.md", data={
            "csrf": csrf_of(editor), "version": version.group(1), "content": "# Web\r\nmine\r\n"})
        assert stale.status_code == 409 and "The current version" in stale.text and "second line" in stale.text
        assert "expected_version" not in stale.text  # the API's field name: this page's form holds "version"
        entry = re.search(r'action="/p/projects/undo/(\d+)/apollo/web.md"', saved.text)
        assert entry
        elsewhere = alice.post(f"/p/projects/undo/{entry.group(1)}/apollo/other.md", data={"csrf": csrf_of(saved.text)})
        assert elsewhere.status_code == 404  # an entry of another note than the URL's is not undone through it
        assert note.read_bytes() == b"# Web\r\n\r\nfirst line\r\nsecond line\r\n"
        undone = alice.post(f"/p/projects/undo/{entry.group(1)}/apollo/web.md", data={"csrf": csrf_of(saved.text)})
        assert undone.status_code == 200 and f"Undone: journal entry {entry.group(1)}" in undone.text
        assert note.read_bytes() == b"# Web\r\n\r\nfirst line\r\n"


def test_a_save_keeps_each_kept_lines_own_ending_and_a_large_note_saves(world: World, base: str) -> None:
    """The browser sends every line break as CRLF: the lines left as they were keep their own (LF, CR, CRLF),
    an added line takes the note's commonest; a note over the form's usual 1 MB field saves too."""
    note = world.vault / "projects/apollo/mixed.md"
    note.write_bytes(b"\n\n# Mixed\r\nlf line\ncr line\rcrlf line\r\nend")
    big = world.vault / "projects/apollo/big.md"
    big.write_bytes(("# Big\n" + "Größe und Maß, eine lange Zeile.\n" * 40_000).encode("utf-8"))  # 1.4 MB
    world.runtime.indexing.sync_paths(["projects/apollo/mixed.md", "projects/apollo/big.md"])
    with browser(base, "alice") as alice:
        editor = alice.get("/p/projects/edit/apollo/mixed.md").text
        assert '<textarea id="content" name="content" rows="30" spellcheck="false">\n\n\n# Mixed' in editor
        version = re.search(r'name="version" value="([0-9a-f]{16})"', editor)
        assert version
        saved = alice.post("/p/projects/edit/apollo/mixed.md", data={
            "csrf": csrf_of(editor), "version": version.group(1),
            "content": "\r\n\r\n# Mixed\r\nlf line\r\nnew line\r\ncr line\r\ncrlf line\r\nend"})
        assert "Saved apollo/mixed.md" in saved.text
        assert note.read_bytes() == b"\n\n# Mixed\r\nlf line\nnew line\ncr line\rcrlf line\r\nend"
        editor = alice.get("/p/projects/edit/apollo/big.md").text
        version = re.search(r'name="version" value="([0-9a-f]{16})"', editor)
        assert version
        text = big.read_text(encoding="utf-8").replace("\n", "\r\n") + "Schluss.\r\n"
        saved = alice.post("/p/projects/edit/apollo/big.md", data={"csrf": csrf_of(editor),
                                                                   "version": version.group(1), "content": text})
        assert "Saved apollo/big.md" in saved.text, saved.text[:300]
        assert big.read_text(encoding="utf-8").endswith("Zeile.\nSchluss.\n")
        short = world.vault / "projects/apollo/short-lines.md"  # 2.05 MB (under 2 MiB) of short lines, 2.25 M
        short.write_bytes(b"abcdefghi\n" * 205_000)  # characters as a browser sends them
        world.runtime.indexing.sync_paths(["projects/apollo/short-lines.md"])
        editor = alice.get("/p/projects/edit/apollo/short-lines.md").text
        version = re.search(r'name="version" value="([0-9a-f]{16})"', editor)
        assert version
        saved = alice.post("/p/projects/edit/apollo/short-lines.md", data={
            "csrf": csrf_of(editor), "version": version.group(1), "content": "abcdefghi\r\n" * 205_000 + "end\r\n"})
        assert "Saved apollo/short-lines.md" in saved.text, saved.text[:300]
        assert short.read_bytes() == b"abcdefghi\n" * 205_000 + b"end\n"


def test_readers_see_history_without_edit_or_undo_and_hidden_is_404(world: World, base: str) -> None:
    world.runtime.notes.write_note(world.runtime.authentication.acting_as(None), "northwind-advisory/web.md",
                                   "advice\n", tool="test")
    with browser(base, "alice") as alice:  # a read grant on northwind-advisory
        doc = alice.get("/p/northwind-advisory/doc/web.md").text
        assert "/edit/" not in doc
        history = alice.get("/p/northwind-advisory/history/web.md").text
        assert "+advice" in unescape(history) and "/undo/" not in history
        assert alice.get("/p/northwind-advisory/edit/web.md").status_code == 403
    with browser(base, "bob") as bob:  # sees neither
        hidden = bob.get("/p/northwind-advisory/history/web.md")
        missing = bob.get("/p/nowhere/history/web.md")
        assert hidden.status_code == missing.status_code == 404


@pytest.mark.parametrize("ignored_form", ["NFC", "NFD"])
def test_the_editor_does_not_open_an_ignored_note_by_its_other_unicode_form(world: World, base: str,
                                                                            ignored_form: str) -> None:
    """A review: the editor found the note by either Unicode form of its path after checking the ignore files
    against the form typed, so it showed (and saved over) a file an ignore file passes over, named the other way."""
    folder = world.vault / f"projects/apollo/ignored-{ignored_form.lower()}"
    folder.mkdir(parents=True)
    secret = unicodedata.normalize(ignored_form, "secret-café.md")
    (folder / ".notewellignore").write_text(f"{secret}\n")
    (folder / secret).write_text("# the secret plan\n")
    typed = unicodedata.normalize("NFD" if ignored_form == "NFC" else "NFC", "secret-café.md")
    with browser(base, "alice") as alice:  # a write grant on projects
        url = f"/p/projects/edit/apollo/ignored-{ignored_form.lower()}/{typed}"
        editor = alice.get(url)
        assert editor.status_code == 400 and "is excluded by an ignore file" in unescape(editor.text), editor.text
        assert "the secret plan" not in editor.text
        csrf = csrf_of(alice.get("/p/projects/edit/apollo/web.md").text)
        saved = alice.post(url, data={"csrf": csrf, "version": "0" * 16, "content": "over\r\n"})
        assert saved.status_code == 400 and "the secret plan" not in saved.text
    assert (folder / secret).read_text() == "# the secret plan\n"


def test_a_post_without_the_csrf_token_writes_nothing(world: World, base: str) -> None:
    with browser(base, "alice") as alice:
        refused = alice.post("/p/projects/edit/apollo/csrf.md", data={"content": "x", "version": "0" * 16})
        assert refused.status_code == 403
    assert not (world.vault / "projects/apollo/csrf.md").exists()


def test_the_token_page_offers_knowledge_write_unchecked(base: str) -> None:
    with browser(base, "alice") as alice:
        form = alice.get("/settings/tokens").text
    boxes = dict(re.findall(r'name="scopes" value="([^"]+)"( checked)?', form))
    assert boxes["knowledge:write"] == "" and boxes["knowledge:read"] == " checked"
    assert "write, edit, move and delete documents" in form


def test_a_long_history_says_where_the_older_writes_are(world: World, base: str) -> None:
    owner = world.runtime.authentication.acting_as(None)
    for i in range(22):
        world.runtime.notes.write_note(owner, "northwind-advisory/busy.md", f"write {i}\n", tool="test",
                                       overwrite=True)
    with browser(base, "alice") as alice:
        history = unescape(alice.get("/p/northwind-advisory/history/busy.md").text)
        assert history.count("Journal entry") == 20 and "+write 21" in history and "+write 1\n" not in history
        assert "These are the newest 20 writes" in history and "notewell journal --path" in history
        world.runtime.notes.write_note(owner, "northwind-advisory/calm.md", "once\n", tool="test")
        assert "These are the newest" not in alice.get("/p/northwind-advisory/history/calm.md").text


def _a_note(world: World, rel: str, text: str) -> Path:
    """A note of the projects project, written in the vault and indexed."""
    note = world.vault / "projects" / rel
    note.write_text(text)
    world.runtime.indexing.sync_paths([f"projects/{rel}"])
    return note


def _editor(client: httpx.Client, rel: str) -> tuple[str, str]:
    """The editor page of projects/``rel`` and the version its form holds."""
    editor = client.get(f"/p/projects/edit/{rel}").text
    version = re.search(r'name="version" value="([0-9a-f]{16})"', editor)
    assert version
    return editor, version.group(1)


def test_saving_a_note_deleted_meanwhile_keeps_the_text(world: World, base: str) -> None:
    note = _a_note(world, "apollo/gone-meanwhile.md", "# Gone\n")
    with browser(base, "alice") as alice:
        editor, version = _editor(alice, "apollo/gone-meanwhile.md")
        note.unlink()
        saved = alice.post("/p/projects/edit/apollo/gone-meanwhile.md", data={
            "csrf": csrf_of(editor), "version": version, "content": "# Gone\r\nmy careful words\r\n"})
        assert saved.status_code == 404 and "Not saved: there is no note at projects/apollo/gone-meanwhile.md" \
            in unescape(saved.text)
        assert "my careful words" in saved.text  # in the textarea still
        hidden = alice.post("/p/nowhere/edit/x.md", data={"csrf": csrf_of(editor), "version": version,
                                                          "content": "words"})
        assert hidden.status_code == 404 and "Not saved: there is no note at nowhere/x.md" in unescape(hidden.text)


def test_saving_after_the_session_ended_gives_the_text_back(world: World, base: str) -> None:
    note = _a_note(world, "apollo/ended.md", "# Ended\n")
    with browser(base, "alice") as alice:
        editor, version = _editor(alice, "apollo/ended.md")
        assert alice.post("/signout", data={"csrf": csrf_of(editor)}).status_code == 200  # in another tab
        typed = {"csrf": csrf_of(editor), "version": version, "content": "# Ended\r\nhalf an hour of work\r\n"}
        saved = alice.post("/p/projects/edit/apollo/ended.md", data=typed, headers={"Sec-Fetch-Site": "same-origin"})
        assert saved.status_code == 401 and "Not saved: your session ended" in unescape(saved.text)
        assert "half an hour of work" in saved.text and note.read_text() == "# Ended\n"
        assert saved.headers.get("cache-control") == "no-store"  # a private text, after the session ended
        forged = alice.post("/p/projects/edit/apollo/ended.md", data=typed, headers={"Sec-Fetch-Site": "cross-site"},
                            follow_redirects=False)
        assert forged.status_code == 303 and "half an hour" not in forged.text  # another site's page: sign in


def test_saving_after_the_server_ended_the_session_gives_the_text_back(world: World, base: str) -> None:
    """The cookie still there, its session ended on the server (expired, signed out on another machine, a new
    role): the same 401 with the text, not the sign-in redirect that dropped it."""
    note = _a_note(world, "apollo/ended-there.md", "# Ended\n")
    with browser(base, "alice") as alice:
        editor, version = _editor(alice, "apollo/ended-there.md")
        user = world.runtime.store.identity.user_by_email(email("alice"))
        assert user is not None
        world.runtime.store.identity.end_sessions(user.id)
        saved = alice.post("/p/projects/edit/apollo/ended-there.md", headers={"Sec-Fetch-Site": "same-origin"},
                           data={"csrf": csrf_of(editor), "version": version, "content": "kept words\r\n"})
        assert saved.status_code == 401 and "kept words" in saved.text, saved.status_code
        assert note.read_text() == "# Ended\n"


def test_a_nul_character_in_the_editor_is_the_forms_error_and_nothing_is_written(world: World, base: str) -> None:
    """A probe: %00 in the form's content was written to disk and answered "Saved"; the note was then binary to the
    index and left its own page and search."""
    note = _a_note(world, "apollo/nul.md", "# Nul\n")
    with browser(base, "alice") as alice:
        editor, version = _editor(alice, "apollo/nul.md")
        saved = alice.post("/p/projects/edit/apollo/nul.md", data={"csrf": csrf_of(editor), "version": version,
                                                                  "content": "# Nul\r\na\x00b\r\n"})
        assert saved.status_code == 400, saved.text[:300]
        assert "content: must not contain the NUL character (\\x00); remove it" in unescape(saved.text)
    assert note.read_bytes() == b"# Nul\n"


MIXED = "projects/R\u00e9unions/cafe\u0301.md"  # a folder named composed, a file a Mac named decomposed
MIXED_TYPED = unicodedata.normalize("NFC", MIXED).removeprefix("projects/")


def _put_mixed(world: World, text: str) -> None:
    (world.vault / MIXED).parent.mkdir(parents=True, exist_ok=True)
    (world.vault / MIXED).write_text(text)
    world.runtime.indexing.sync_paths([MIXED])


def test_the_history_page_by_the_typed_form_undoes_what_it_lists(world: World, base: str) -> None:
    """The history page reached by the note's path typed composed lists its entries (the journal finds the note
    name by name), but its undo compared that path with the note's by whole-path forms only: Not found."""
    _put_mixed(world, "# Cafe\n")
    edited = world.runtime.notes.edit_note(LOCAL_OWNER, f"projects/{MIXED_TYPED}", Edit("append", "minutes"),
                                           tool="test")
    with browser(base, "alice") as alice:
        history = alice.get(f"/p/projects/history/{MIXED_TYPED}")
        assert history.status_code == 200 and f"/undo/{edited.journal_id}/" in unescape(history.text)
        undone = alice.post(f"/p/projects/undo/{edited.journal_id}/{MIXED_TYPED}", data={"csrf": csrf_of(history.text)})
        assert undone.status_code == 200 and f"Undone: journal entry {edited.journal_id}" in undone.text, undone.text
    assert (world.vault / MIXED).read_text() == "# Cafe\n"


def test_the_document_page_by_the_typed_form_lists_the_memories_about_it(world: World, base: str) -> None:
    """The document page reads a note by its path in either form, but asked for the memories about it by the
    path as the URL typed it: a note named in mixed forms showed none by its composed URL."""
    _put_mixed(world, "# Cafe\n\nthe agenda\n")
    world.runtime.memory.remember(LOCAL_OWNER, "The cafe agenda needs a chair.", project="projects",
                                  about=f"projects/{MIXED_TYPED}", title="Agenda needs a chair")
    with browser(base, "alice") as alice:
        page = alice.get(f"/p/projects/doc/{MIXED_TYPED}")
    assert page.status_code == 200 and "the agenda" in page.text and "Agenda needs a chair" in page.text


@pytest.mark.parametrize("path", ["apollo/plain.md%00x", "%2e%2e/%2e%2e/outside/plain.md"])
def test_undo_by_a_path_that_is_no_note_is_404_and_opens_nothing_outside(world: World, base: str, path: str,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The undo's path comes from the URL: a NUL in it was a 500 (the file system refuses the name), and a ".."
    was looked up as it came, opening folders outside the vault. Both are Not found, and no ".." is opened."""
    note = world.vault / "projects/apollo/plain.md"
    note.write_text("# Plain\n")
    world.runtime.indexing.sync_paths(["projects/apollo/plain.md"])
    edited = world.runtime.notes.edit_note(LOCAL_OWNER, "projects/apollo/plain.md", Edit("append", "more"),
                                           tool="test")
    (world.vault.parent / "outside").mkdir(exist_ok=True)
    (world.vault.parent / "outside/plain.md").write_text("# Not the vault's\n")
    opened: list[str] = []
    real_open, real_stat = os.open, os.stat

    def spy_open(name: Any, *args: Any, **kwargs: Any) -> int:
        opened.append(str(name))
        return real_open(name, *args, **kwargs)

    def spy_stat(name: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        opened.append(str(name))
        return real_stat(name, *args, **kwargs)

    with browser(base, "alice") as alice:
        history = alice.get("/p/projects/history/apollo/plain.md")
        monkeypatch.setattr(os, "open", spy_open)
        monkeypatch.setattr(os, "stat", spy_stat)
        undone = alice.post(f"/p/projects/undo/{edited.journal_id}/{path}", data={"csrf": csrf_of(history.text)})
        monkeypatch.undo()
    assert undone.status_code == 404, undone.text[:300]
    assert ".." not in opened and not any("\x00" in name for name in opened)
    assert "more" in note.read_text()  # not undone
