"""A vault (or the store in it) moved or deleted while a server runs: a 503 naming what is gone, never a 500 or a
400 that blames the caller's request (an outside probe: `mv vault elsewhere` under `notewell serve` gave 500
"Internal server error" for a note written, and, with the store inside the vault, 400 "--db: cannot open …
pass another --db" for every request)."""

from __future__ import annotations

from pathlib import Path

import httpx

from conftest import make_vault
from mcp_world import ServerThread
from notewell.access.principal import LOCAL_OWNER
from notewell.http.app import build_app
from notewell.http.door import ServeOptions
from notewell.mcp.registry import choose
from notewell.runtime import Runtime, open_runtime


def _served(vault: Path, db: str) -> tuple[Runtime, dict[str, str]]:
    rt = open_runtime(str(vault), db)
    rt.indexing.sync()
    rt.administration.add_user(LOCAL_OWNER, "ada@example.test", "admin", handle="ada")
    token = rt.administration.mint_token(LOCAL_OWNER, "ada@example.test",
                                         ["knowledge:read", "knowledge:write"]).secret
    return rt, {"Authorization": f"Bearer {token}"}


def test_a_note_written_after_the_vault_went_away_is_a_503_naming_the_vault(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {"apollo/a.md": "# A\n"})
    rt, bearer = _served(vault, str(tmp_path / "outside.db"))
    try:
        with ServerThread(build_app(rt, ServeOptions(choose(None), watch=False, jobs=False))) as server, \
                httpx.Client(base_url=f"http://127.0.0.1:{server.port}", timeout=30) as client:
            vault.rename(tmp_path / "moved")
            put = client.put("/api/v1/projects/~ada/documents/new.md", headers=bearer, json={"content": "# New\n"})
            assert put.status_code == 503 and put.headers["retry-after"], put.text
            assert f"the vault folder {vault} is gone" in put.json()["detail"], put.text
            assert not (tmp_path / "moved" / "~ada" / "new.md").exists()
    finally:
        rt.close()


def test_a_store_that_went_away_with_its_vault_is_a_503_not_a_bad_db_flag(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {"apollo/a.md": "# A\n"})
    rt, bearer = _served(vault, str(vault / ".notewell" / "index.db"))
    try:
        with ServerThread(build_app(rt, ServeOptions(choose(None), watch=False, jobs=False))) as server, \
                httpx.Client(base_url=f"http://127.0.0.1:{server.port}", timeout=30) as client:
            assert client.get("/api/v1/projects", headers=bearer).status_code == 200
            vault.rename(tmp_path / "moved")
            rt.store.db.close()  # type: ignore[attr-defined]  # every thread opens its connection again, as new ones do
            listed = client.get("/api/v1/projects", headers=bearer)
            assert listed.status_code == 503, listed.text
            detail = listed.json()["detail"]
            assert "cannot be opened now" in detail and "moved or deleted" in detail and "--db:" not in detail, detail
    finally:
        rt.close()
