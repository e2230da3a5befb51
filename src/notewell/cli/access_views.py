"""How users, projects, grants, tokens and audit entries look in --json output."""

from __future__ import annotations

from notewell.records.identity import AuditEntry, Grant, Project, TokenRecord, User
from notewell.timestamps import now_iso


def user_json(user: User) -> dict[str, object]:
    return {"id": user.id, "email": user.email, "name": user.name, "handle": user.handle, "role": user.role,
            "active": user.active, "home": user.home_project, "createdAt": user.created_at}


def project_json(project: Project) -> dict[str, object]:
    return {"id": project.id, "name": project.name, "description": project.description, "kind": project.kind,
            "status": project.status, "framework": project.framework, "language": project.language,
            "createdAt": project.created_at}


def grant_json(grant: Grant, email: str) -> dict[str, object]:
    return {"user": email, "project": grant.project_id, "level": grant.level}


def token_json(token: TokenRecord, email: str) -> dict[str, object]:
    """A token without its secret (the store does not have it)."""
    return {"id": token.id, "user": email, "name": token.name, "scopes": list(token.scopes),
            "project": token.project_id, "createdAt": token.created_at, "expiresAt": token.expires_at,
            "lastUsedAt": token.last_used_at, "revokedAt": token.revoked_at, "state": token.state(now_iso())}


def audit_json(entry: AuditEntry, email: str | None) -> dict[str, object]:
    return {"id": entry.id, "at": entry.at, "user": entry.user_id, "email": email, "token": entry.token_id,
            "action": entry.action, "target": entry.target, "detail": entry.detail}

