"""The identity commands through the real CLI: users, projects, grants, tokens, audit; --json shapes and
one-line errors with exit 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import Result

from conftest import make_vault, run_cli, runtime_over
from notewell.errors import Unauthenticated
from notewell.store import open_store
from notewell.store.shared.identity import SqlIdentity


class Cli:
    def __init__(self, vault: Path, db: Path) -> None:
        self.vault, self.db = vault, db

    def __call__(self, *args: str) -> Result:
        return run_cli(*args, "--vault", str(self.vault), "--db", str(self.db))

    def json(self, *args: str) -> object:
        result = self(*args, "--json")
        assert result.exit_code == 0, result.stderr
        return json.loads(result.stdout)

    def error(self, *args: str) -> str:
        """Run a command that must fail: exit 1, nothing on stdout, one line on stderr, no traceback."""
        result = self(*args)
        assert result.exit_code == 1, (result.stdout, result.stderr)
        assert result.stdout == ""
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, result.stderr
        assert "Traceback" not in result.stderr
        return lines[0]


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    vault = make_vault(tmp_path, {
        "apollo/README.md": "---\nname: Apollo\ndescription: The Apollo programme: plans and decisions.\n---\n# A\n",
        "apollo/plan.md": "# Plan\n",
        "handbook/README.md": "---\nname: Handbook\ndescription: How we work: onboarding, policies.\n---\n",
        "handbook/travel.md": "# Travel\n",
        "bare/notes.md": "# Notes\n",
    })
    return Cli(vault, tmp_path / "index.db")


def test_index_turns_vault_folders_into_projects_named_by_their_readme(cli: Cli) -> None:
    assert cli("index").exit_code == 0
    projects = cli.json("project", "list")
    assert projects == [
        {"id": "apollo", "name": "Apollo", "description": "The Apollo programme: plans and decisions.",
         "kind": "ordinary", "status": "active", "framework": None, "language": None,
         "createdAt": projects[0]["createdAt"]},  # type: ignore[index]
        {"id": "bare", "name": "bare", "description": "", "kind": "ordinary", "status": "active", "framework": None,
         "language": None, "createdAt": projects[1]["createdAt"]},  # type: ignore[index]
        {"id": "handbook", "name": "Handbook", "description": "How we work: onboarding, policies.", "kind": "ordinary",
         "status": "active", "framework": None, "language": None, "createdAt": projects[2]["createdAt"]},  # type: ignore[index]
    ]
    # a README edit flows in on the next index; a name set from the CLI is kept over the README
    (cli.vault / "apollo" / "README.md").write_text("---\nname: Apollo 2\ndescription: New.\n---\n", encoding="utf-8")
    cli.json("project", "set", "handbook", "--name", "Our handbook")
    assert cli("index").exit_code == 0
    names = {p["id"]: (p["name"], p["description"]) for p in cli.json("project", "list")}  # type: ignore[union-attr]
    assert names["apollo"] == ("Apollo 2", "New.")
    assert names["handbook"] == ("Our handbook", "How we work: onboarding, policies.")


def test_user_add_list_deactivate(cli: Cli) -> None:
    user = cli.json("user", "add", "Ada.Lovelace@Example.com", "--role", "member", "--name", "Ada")
    assert user == {"id": user["id"], "email": "Ada.Lovelace@Example.com", "name": "Ada",  # type: ignore[index]
                    "handle": "ada-lovelace", "role": "member", "active": True, "home": "~ada-lovelace",
                    "createdAt": user["createdAt"]}  # type: ignore[index]
    assert (cli.vault / "~ada-lovelace").is_dir()
    assert (cli.vault / "~ada-lovelace").stat().st_mode & 0o777 == 0o700  # a home is its owner's alone
    staff = cli.json("user", "add", "sam@example.com", "--role", "staff", "--handle", "sam")
    assert staff["home"] == "~sam"  # type: ignore[index]
    plain = cli("user", "add", "root@example.com", "--role", "admin")
    assert plain.exit_code == 0 and "Added admin root@example.com" in plain.stdout
    listed = cli.json("user", "list")
    assert [u["email"] for u in listed] == ["Ada.Lovelace@Example.com", "root@example.com",  # type: ignore[union-attr]
                                            "sam@example.com"]
    gone = cli.json("user", "deactivate", "ADA.LOVELACE@example.com")
    assert gone["active"] is False  # type: ignore[index]
    assert cli.json("user", "activate", "ada.lovelace@example.com")["active"] is True  # type: ignore[index]
    assert "ada-lovelace" in cli("user", "list").stdout
    assert cli.json("user", "role", "sam@example.com", "admin")["role"] == "admin"  # type: ignore[index]
    assert "sam@example.com is now member" in cli("user", "role", "sam@example.com", "member").stdout
    assert "'boss' is not a role" in cli.error("user", "role", "sam@example.com", "boss")


def test_user_errors(cli: Cli) -> None:
    cli.json("user", "add", "ada@example.com", "--role", "member")
    assert "already a user" in cli.error("user", "add", "ADA@example.com", "--role", "member")
    assert "'boss' is not a role" in cli.error("user", "add", "bob@example.com", "--role", "boss")
    assert "not an email" in cli.error("user", "add", "bob", "--role", "member")
    assert "--handle" in cli.error("user", "add", "bob@example.com", "--role", "member", "--handle", "Bad Handle")
    assert "is taken" in cli.error("user", "add", "bob@example.com", "--role", "member", "--handle", "ada")
    assert "No user with email nobody@example.com" in cli.error("user", "deactivate", "nobody@example.com")


def test_project_add_archive_unarchive_set(cli: Cli) -> None:
    added = cli.json("project", "add", "hermes", "--name", "Hermes", "--description", "Courier app",
                     "--framework", "react", "--language", "typescript")
    assert {k: added[k] for k in ("id", "name", "description", "kind", "status", "framework", "language")} == {  # type: ignore[index]
        "id": "hermes", "name": "Hermes", "description": "Courier app", "kind": "ordinary", "status": "active",
        "framework": "react", "language": "typescript"}
    assert cli.json("project", "archive", "hermes")["status"] == "archived"  # type: ignore[index]
    assert cli.json("project", "list") == []
    assert [p["id"] for p in cli.json("project", "list", "--archived")] == ["hermes"]  # type: ignore[union-attr]
    assert cli.json("project", "unarchive", "hermes")["status"] == "active"  # type: ignore[index]
    changed = cli.json("project", "set", "hermes", "--description", "Delivery app", "--language", "python")
    assert (changed["name"], changed["description"], changed["language"]) == (  # type: ignore[index]
        "Hermes", "Delivery app", "python")
    assert "exists already" in cli.error("project", "add", "hermes")
    assert "ID:" in cli.error("project", "add", "Bad Id")
    assert cli.error("project", "archive", "nowhere") == ("error: ID: no ordinary project has the id nowhere; see "
                                                          "'notewell project list'")
    cli.json("user", "add", "ada@example.com", "--role", "member")
    assert cli.error("project", "set", "~ada", "--name", "Mine") == (  # homes are private: said as for a missing one
        "error: ID: no ordinary project has the id ~ada; see 'notewell project list'")
    assert "--name" in cli.error("project", "set", "hermes", "--name", " ")


def test_grant_and_ungrant(cli: Cli) -> None:
    cli("index")
    cli.json("user", "add", "ada@example.com", "--role", "member")
    assert cli.json("grant", "ada@example.com", "apollo") == {"user": "ada@example.com", "project": "apollo",
                                                             "level": "read", "previous": None}
    assert cli.json("grant", "ADA@example.com", "apollo", "--write")["previous"] == "read"  # type: ignore[index]
    assert "may read apollo (was write)" in cli("grant", "ada@example.com", "apollo").stdout  # a downgrade is said
    assert cli.json("grant", "ADA@example.com", "apollo", "--write")["level"] == "write"  # type: ignore[index]
    assert cli.json("ungrant", "ada@example.com", "apollo") == {"user": "ada@example.com", "project": "apollo",
                                                               "level": None}
    assert "holds no grant on apollo" in cli.error("ungrant", "ada@example.com", "apollo")
    cli.json("user", "add", "carl@example.com", "--role", "staff")
    cli.json("grant", "carl@example.com", "apollo", "--write")
    cli.json("grant", "carl@example.com", "handbook")
    cli.json("grant", "ada@example.com", "handbook")
    assert cli.json("grants", "--project", "handbook") == [
        {"user": "ada@example.com", "project": "handbook", "level": "read"},
        {"user": "carl@example.com", "project": "handbook", "level": "read"},
    ]
    assert cli.json("grants", "--user", "carl@example.com") == [
        {"user": "carl@example.com", "project": "apollo", "level": "write"},
        {"user": "carl@example.com", "project": "handbook", "level": "read"},
    ]
    assert len(cli.json("grants")) == 3  # type: ignore[arg-type]
    assert cli.json("grants", "--user", "ada@example.com", "--project", "apollo") == []
    assert "carl@example.com" in cli("grants").stdout
    assert "No user with email bob@example.com" in cli.error("grant", "bob@example.com", "apollo")
    assert cli.error("grant", "ada@example.com", "nowhere") == ("error: PROJECT: no ordinary project has the id "
                                                                "nowhere; see 'notewell project list'")
    assert cli.error("grant", "ada@example.com", "~ada") == ("error: PROJECT: no ordinary project has the id ~ada; "
                                                             "see 'notewell project list'")
    assert cli.error("grant", "bob@example.com", "nowhere") == ("error: EMAIL: No user with email bob@example.com; "
                                                                "see 'notewell user list'")
    assert cli.error("grants", "--project", "nowhere").startswith("error: --project: no ordinary project has the id")
    assert cli.error("grant", "  ", "apollo") == "error: EMAIL: is empty: give the email address of a user"


def test_token_mint_list_revoke(cli: Cli) -> None:
    cli("index")
    cli.json("user", "add", "ada@example.com", "--role", "member")
    cli.json("grant", "ada@example.com", "apollo")
    minted = cli.json("token", "mint", "--user", "ada@example.com", "--scopes", "knowledge:read,memory:read",
                      "--project", "apollo", "--name", "cursor", "--expires", "90d")
    assert isinstance(minted, dict)
    secret = minted.pop("token")
    assert secret.startswith("nw_") and len(secret) >= 3 + 13 + 43
    assert minted == {"id": minted["id"], "user": "ada@example.com", "name": "cursor",
                      "scopes": ["knowledge:read", "memory:read"],
                      "mintedScopes": ["knowledge:read", "memory:read"], "project": "apollo",
                      "createdAt": minted["createdAt"], "expiresAt": minted["expiresAt"], "lastUsedAt": None,
                      "revokedAt": None, "state": "active"}
    store = open_store(str(cli.db))
    try:
        assert runtime_over(store, cli.vault).authentication.authenticate(secret).bound_project == "apollo"
    finally:
        store.close()
    listed = cli.json("token", "list", "--user", "ada@example.com")
    assert [t["id"] for t in listed] == [minted["id"]]  # type: ignore[union-attr]
    assert "token" not in listed[0]  # type: ignore[index]
    assert listed[0]["lastUsedAt"] is not None  # type: ignore[index]
    revoked = cli.json("token", "revoke", str(minted["id"]))
    assert revoked["state"] == "revoked" and revoked["revokedAt"]  # type: ignore[index]
    assert cli.json("token", "list")[0]["state"] == "revoked"  # type: ignore[index]
    table = cli("token", "list")
    assert table.exit_code == 0 and "revoked" in table.stdout


def test_a_leaked_token_is_revoked_by_its_secret_which_is_never_printed(cli: Cli) -> None:
    cli("index")
    cli.json("user", "add", "ada@example.com", "--role", "member")
    minted = cli.json("token", "mint", "--user", "ada@example.com", "--scopes", "knowledge:read")
    assert isinstance(minted, dict)
    secret = str(minted["token"])
    wrong = secret[:-4] + ("AAAA" if not secret.endswith("AAAA") else "BBBB")  # its id, another secret
    refused = cli.error("token", "revoke", wrong)
    assert "No token has the secret given" in refused and secret[20:] not in refused and wrong[20:] not in refused
    assert cli.json("token", "list")[0]["state"] == "active"  # type: ignore[index]
    revoked = cli.json("token", "revoke", secret)
    assert revoked["id"] == minted["id"] and revoked["state"] == "revoked"  # type: ignore[index]
    shown = cli("token", "revoke", secret)
    assert shown.exit_code == 0 and secret not in shown.stdout + shown.stderr


def test_token_errors(cli: Cli) -> None:
    cli("index")
    cli.json("user", "add", "ada@example.com", "--role", "member")
    mint = ("token", "mint", "--user")
    assert "No user with email bob@example.com" in cli.error(*mint, "bob@example.com", "--scopes", "knowledge:read")
    assert "may not hold admin" in cli.error(*mint, "ada@example.com", "--scopes", "knowledge:read,admin")
    assert "unknown scope" in cli.error(*mint, "ada@example.com", "--scopes", "everything")
    assert cli.error(*mint, "ada@example.com", "--scopes", "knowledge:read", "--project", "nowhere") == (
        "error: --project: no project has the id nowhere; see 'notewell project list'")
    assert cli.error(*mint, "bob@example.com", "--scopes", "knowledge:read").startswith("error: --user: No user")
    assert cli.error("token", "revoke", "abc") == (
        "error: ID: that is not a token id (a token id is the 12 hex characters after nw_ in the secret, shown by "
        "the token list); the text given is not shown; see 'notewell token list'")
    assert "cannot see project apollo" in cli.error(*mint, "ada@example.com", "--scopes", "knowledge:read",
                                                    "--project", "apollo")
    assert "--expires" in cli.error(*mint, "ada@example.com", "--scopes", "knowledge:read", "--expires", "1 year")
    assert "No token with id 000000000000" in cli.error("token", "revoke", "000000000000")


def _authenticates(cli: Cli | TokenCli, secret: str) -> bool:
    store = open_store(str(cli.db))
    try:
        runtime_over(store, cli.vault).authentication.authenticate(secret)
        return True
    except Unauthenticated:
        return False
    finally:
        store.close()


def test_a_secret_given_to_revoke_in_any_wrapping_is_never_repeated_and_a_whole_one_is_revoked(cli: Cli) -> None:
    cli.json("user", "add", "ada@example.com", "--role", "member")
    mint = ("token", "mint", "--user", "ada@example.com", "--scopes", "knowledge:read")
    secrets_ = [str(cli.json(*mint)["token"]) for _ in range(4)]  # type: ignore[index]
    ids = [s[3:15] for s in secrets_]
    wrapped = [f"Bearer {secrets_[0]}", f"'{secrets_[1]}'", f"NOTEWELL_TOKEN={secrets_[2]}",
               f' "Authorization: Bearer {secrets_[3]}" ']
    for given, token_id, secret in zip(wrapped, ids, secrets_, strict=True):
        assert _authenticates(cli, secret)
        done = cli("token", "revoke", given)
        assert done.exit_code == 0, done.stderr
        assert done.stdout == f"Token {token_id} is revoked\n"  # names the token it revoked
        assert secret[15:] not in done.stdout + done.stderr
        assert not _authenticates(cli, secret)  # found by its hash, as a sign-in finds it
    random_part = secrets_[0][16:]
    for given in (secrets_[0][:30], f"Bearer {secrets_[0][:30]}", random_part, f"-{random_part}", f"-v{random_part}",
                  f"--{random_part}", f"nw_{ids[0]}_", "nw_x",
                  "Bearer", secrets_[0] + "!" * 3 + secrets_[1], f"{secrets_[0]} {secrets_[1]}", "3F9A0C1B2D4E"):
        refused = cli.error("token", "revoke", given)
        assert refused.startswith("error: ID: ") and refused.endswith("; see 'notewell token list'")
        assert given.strip() not in refused and random_part[:8] not in refused, refused
        assert "the text given is not shown" in refused or "(not shown here)" in refused
    forged = secrets_[0][:-4] + ("AAAA" if not secrets_[0].endswith("AAAA") else "BBBB")
    refused = cli.error("token", "revoke", f"Bearer {forged}")
    assert "No token has the secret given (not shown here)" in refused and forged[16:] not in refused
    json_revoked = cli.json("token", "revoke", f"NOTEWELL_TOKEN={secrets_[3]}")  # revoked twice: no change
    assert json_revoked["id"] == ids[3] and json_revoked["state"] == "revoked"  # type: ignore[index]


class TokenCli(Cli):
    def __init__(self, vault: Path, db: str) -> None:
        self.vault, self.db = vault, db  # type: ignore[assignment]


@pytest.fixture
def token_cli(tmp_path: Path, store_url: str) -> TokenCli:
    """The CLI over a fresh store of each backend."""
    return TokenCli(make_vault(tmp_path, {"apollo/plan.md": "# Plan\n"}), store_url)


def test_token_list_and_doctor_show_what_a_tokens_next_call_meets(token_cli: TokenCli) -> None:
    cli = token_cli
    cli.json("user", "add", "ada@example.com", "--role", "admin")
    cli.json("user", "add", "bo@example.com", "--role", "member")
    mint = ("token", "mint", "--scopes")
    ada = cli.json(*mint, "knowledge:read,admin", "--user", "ada@example.com")
    bo = cli.json(*mint, "knowledge:read,memory:read", "--user", "bo@example.com")
    assert isinstance(ada, dict) and isinstance(bo, dict)
    assert ada["scopes"] == ada["mintedScopes"] == ["knowledge:read", "admin"]
    doctor = {c["check"]: c for c in cli.json("doctor")}  # type: ignore[union-attr]
    assert doctor["tokens"]["found"] == "2 active tokens"
    cli.json("user", "deactivate", "bo@example.com")
    cli.json("user", "role", "ada@example.com", "member")
    assert not _authenticates(cli, str(bo["token"]))
    assert _authenticates(cli, str(ada["token"]))
    listed = {t["id"]: t for t in cli.json("token", "list")}  # type: ignore[union-attr]
    assert listed[bo["id"]]["state"] == "user deactivated"
    assert listed[bo["id"]]["scopes"] == ["knowledge:read", "memory:read"]
    assert listed[ada["id"]]["state"] == "active"
    assert listed[ada["id"]]["scopes"] == ["knowledge:read"]  # what the role allows from the next call
    assert listed[ada["id"]]["mintedScopes"] == ["knowledge:read", "admin"]
    table = cli("token", "list")
    assert table.exit_code == 0
    rows = {line.split("\t")[0]: line.split("\t") for line in table.stdout.splitlines()}
    assert rows[str(bo["id"])][-1] == "user deactivated"
    assert rows[str(ada["id"])][3] == "knowledge:read (minted also admin, which a member may not hold)"
    assert rows[str(ada["id"])][-1] == "active"
    doctor = {c["check"]: c for c in cli.json("doctor")}  # type: ignore[union-attr]
    assert doctor["tokens"]["found"] == "1 active tokens; 1 more of deactivated users fail until they are reactivated"
    cli.json("token", "revoke", str(ada["id"]))
    doctor = {c["check"]: c for c in cli.json("doctor")}  # type: ignore[union-attr]
    assert doctor["tokens"]["status"] == "warn" and doctor["tokens"]["found"].startswith("no active token")
    cli.json("user", "activate", "bo@example.com")
    assert _authenticates(cli, str(bo["token"]))
    assert cli.json("token", "list", "--user", "bo@example.com")[0]["state"] == "active"  # type: ignore[index]


def test_a_token_its_users_role_leaves_no_scope_says_so_in_token_list_and_doctor(token_cli: TokenCli) -> None:
    """A token minted with admin alone, its person demoted: it was 'active' (every call it makes is refused for
    want of a scope); it is 'no usable scope', not counted active by doctor, and still revocable."""
    cli = token_cli
    cli.json("user", "add", "ada@example.com", "--role", "admin")
    mint = ("token", "mint", "--user", "ada@example.com", "--scopes")
    ops = cli.json(*mint, "admin")
    reader = cli.json(*mint, "knowledge:read")
    assert isinstance(ops, dict) and isinstance(reader, dict)
    cli.json("user", "role", "ada@example.com", "member")
    listed = {t["id"]: t for t in cli.json("token", "list")}  # type: ignore[union-attr]
    assert listed[ops["id"]]["state"] == "no usable scope"
    assert listed[ops["id"]]["scopes"] == [] and listed[ops["id"]]["mintedScopes"] == ["admin"]
    assert listed[reader["id"]]["state"] == "active"
    table = cli("token", "list")
    assert table.exit_code == 0
    rows = {line.split("\t")[0]: line.split("\t") for line in table.stdout.splitlines()}
    assert rows[str(ops["id"])][3] == "none (minted also admin, which a member may not hold)"
    assert rows[str(ops["id"])][-1] == "no usable scope"
    doctor = {c["check"]: c for c in cli.json("doctor")}  # type: ignore[union-attr]
    assert doctor["tokens"]["found"] == "1 active tokens; 1 more have no usable scope (their users' roles allow " \
                                        "none of the scopes they were minted with)"
    assert _authenticates(cli, str(ops["token"]))  # let in, as the state says, with nothing it may do
    cli.json("user", "role", "ada@example.com", "admin")  # not for good: the role allows admin again
    states = {t["id"]: t["state"] for t in cli.json("token", "list")}  # type: ignore[union-attr]
    assert states == {ops["id"]: "active", reader["id"]: "active"}
    assert cli.json("token", "revoke", str(ops["id"]))["state"] == "revoked"  # type: ignore[index]


def test_token_list_reads_a_page_of_tokens_and_their_users_with_a_way_on(token_cli: TokenCli,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """token list read every token and every user of the store to print them all: it prints a page (--limit,
    oldest first) with the next --offset named under it, reading that page's tokens and their users alone."""
    cli = token_cli
    for who in ("ada", "bo", "cy"):
        cli.json("user", "add", f"{who}@example.com", "--role", "member")
    minted = [str(cli.json("token", "mint", "--user", f"{who}@example.com", "--scopes", "memory:read",  # type: ignore[index]
                           "--name", f"t{n}")["id"]) for n, who in enumerate(("ada", "bo", "ada", "bo", "ada"))]
    whole: list[str] = []
    for name in ("users", "tokens"):
        real = getattr(SqlIdentity, name)
        monkeypatch.setattr(SqlIdentity, name, lambda *args, _n=name, _r=real: whole.append(_n) or _r(*args))
    seen: list[str] = []
    offset = 0
    while True:
        page = cli("token", "list", "--limit", "2", "--offset", str(offset), "--json")
        assert page.exit_code == 0, page.stderr
        seen += [t["id"] for t in json.loads(page.stdout)]
        if "More tokens follow" not in page.stderr:
            break
        assert f"More tokens follow: --offset {offset + 2}" in page.stderr
        offset += 2
    assert seen == minted and offset == 4 and not whole, whole
    table = cli("token", "list", "--user", "bo@example.com", "--limit", "1")
    assert [line.split("\t")[0] for line in table.stdout.splitlines()] == [minted[1]]
    assert "More tokens follow: --offset 1" in table.stderr
    past = cli("token", "list", "--offset", "5")
    assert past.stdout == "" and "No tokens after --offset 5" in past.stderr
    assert "--limit" in cli("token", "list", "--limit", "0").stderr and not whole, whole


def test_the_audit_log_records_every_change(cli: Cli) -> None:
    cli("index")
    cli.json("user", "add", "ada@example.com", "--role", "member")
    cli.json("grant", "ada@example.com", "apollo", "--write")
    cli.json("ungrant", "ada@example.com", "apollo")
    cli.json("project", "add", "hermes")
    cli.json("project", "set", "hermes", "--name", "Hermes")
    cli.json("project", "archive", "hermes")
    cli.json("project", "unarchive", "hermes")
    token = cli.json("token", "mint", "--user", "ada@example.com", "--scopes", "memory:write")
    cli.json("token", "revoke", token["id"])  # type: ignore[index]
    cli.json("user", "deactivate", "ada@example.com")
    entries = cli.json("audit")
    assert isinstance(entries, list)
    actions = [(e["action"], e["target"]) for e in entries]
    assert actions == [
        ("project.discover", "apollo"), ("project.discover", "bare"), ("project.discover", "handbook"),
        ("user.add", "ada@example.com"), ("grant.set", "apollo"), ("grant.remove", "apollo"),
        ("project.add", "hermes"), ("project.set", "hermes"), ("project.archive", "hermes"),
        ("project.unarchive", "hermes"), ("token.mint", token["id"]), ("token.revoke", token["id"]),  # type: ignore[index]
        ("user.deactivate", "ada@example.com"),
    ]
    assert all(e["user"] == "local-owner" and e["email"] == "owner@localhost" and e["token"] is None
               and e["at"].endswith("Z") for e in entries)
    mint = entries[10]
    assert mint["detail"] == {"user": "ada@example.com", "name": "", "scopes": ["memory:write"], "project": None,
                              "expiresAt": None}
    assert token["token"] not in json.dumps(entries)  # type: ignore[index]
    assert cli.json("audit", "--since", "1h") == entries
    assert cli.json("audit", "--since", "2999-01-01") == []
    assert "--since" in cli.error("audit", "--since", "yesterday")
    table = run_cli("audit", "--since", "7d", "--vault", str(cli.vault), "--db", str(cli.db), env={"COLUMNS": "250"})
    assert table.exit_code == 0 and "token.revoke" in table.stdout and "user.deactivate" in table.stdout
    assert "owner@localhost" in table.stdout and "local-owner" not in table.stdout  # people by email, not by id


def test_help_lists_the_identity_commands(cli: Cli) -> None:
    out = run_cli("--help").stdout
    for command in ("user", "project", "grant", "ungrant", "token", "audit"):
        assert command in out
