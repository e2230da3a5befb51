"""Build the upgrade fixtures from an earlier commit's code (tests/test_upgrade.py opens them with today's).

    git archive <commit> src | tar -x -C /tmp/old
    PYTHONPATH=/tmp/old/src python tests/data/upgrade/make_fixture.py OUT.db [postgresql://… OUT.sql]

It fills a store through that commit's services (people, grants, a token, memories written, superseded,
forgotten and kept private, a coding session with an event and an outcome, taught knowledge, a password),
writes it as a SQLite file (vacuumed) and, given a PostgreSQL URL, fills that database the same way and
dumps it as plain SQL (pg_dump --no-owner). Nothing here depends on today's code: the fixtures must keep
what that commit wrote.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

from notewell.access.authentication import user_principal
from notewell.access.principal import LOCAL_OWNER
from notewell.runtime import open_runtime


def fill(db: str) -> None:
    vault = Path(tempfile.mkdtemp(prefix="notewell-upgrade-fixture-"))
    (vault / "shared").mkdir()
    (vault / "shared" / "runbook.md").write_text("# Runbook\n\nFlash the gripper firmware with the staging key.\n")
    rt = open_runtime(str(vault), db)
    try:
        rt.indexing.sync()
        admin = rt.administration
        for handle in ("alice", "bob"):
            admin.add_user(LOCAL_OWNER, f"{handle}@example.test", "member", handle=handle)
            admin.grant(LOCAL_OWNER, f"{handle}@example.test", "shared", "write")
        admin.mint_token(LOCAL_OWNER, "alice@example.test", ["memory:read", "sessions"])
        alice, bob = (user_principal(u) for u in admin.users(LOCAL_OWNER))
        first = rt.memory.remember(alice, "The gripper firmware uses the staging key.", project="shared", path="deploy")
        rt.memory.remember(alice, "The gripper firmware uses the production key.", project="shared", path="deploy",
                           supersedes=first.memory.ref)
        gone = rt.memory.remember(bob, "A scratch gripper note", project="shared", path="scratch")
        rt.memory.forget(bob, gone.memory.ref, "obsolete")
        rt.memory.remember(alice, "My private gripper reminder", private=True)
        taught, _ = rt.brain.teach(alice, rule="Flash with the staging key first", trigger="deploying firmware",
                                   project_id="shared")
        started = rt.brain.start_session(alice, client_type="claude-code", prompt="fix the gripper stall",
                                         project_id="shared")
        rt.brain.log_event(alice, started.session.id, "file_edit", {"path": "arm.py"})
        rt.brain.report_outcome(alice, started.session.id, success=True, summary="lowered the acceleration limit",
                                knowledge_used=[taught.ref])
        rt.sign_in.set_password(LOCAL_OWNER, "alice@example.test", "correct horse battery staple")
    finally:
        rt.close()


def main() -> None:
    out = Path(sys.argv[1])
    out.unlink(missing_ok=True)
    fill(str(out))
    with sqlite3.connect(out, isolation_level=None) as conn:
        conn.execute("PRAGMA journal_mode=DELETE")
        conn.execute("VACUUM")
    if len(sys.argv) == 4:
        fill(sys.argv[2])
        dump = subprocess.run(["pg_dump", "--no-owner", "--no-privileges", "--dbname", sys.argv[2]], check=True,
                              capture_output=True, text=True).stdout
        Path(sys.argv[3]).write_text(dump)


if __name__ == "__main__":
    main()
