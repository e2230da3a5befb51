"""How users, projects, grants, tokens and audit entries look in --json output."""

from __future__ import annotations

from notewell.access.administration import TokenStanding
from notewell.records.identity import AuditEntry, Grant, Project, User


def user_json(user: User) -> dict[str, object]:
    return {"id": user.id, "email": user.email, "name": user.name, "handle": user.handle, "role": user.role,
            "active": user.active, "home": user.home_project, "createdAt": user.created_at}


def project_json(project: Project) -> dict[str, object]:
    return {"id": project.id, "name": project.name, "description": project.description, "kind": project.kind,
            "status": project.status, "framework": project.framework, "language": project.language,
            "createdAt": project.created_at}


def grant_json(grant: Grant, email: str) -> dict[str, object]:
    return {"user": email, "project": grant.project_id, "level": grant.level}


def token_json(standing: TokenStanding) -> dict[str, object]:
    """A token without its secret (the store does not have it): ``state`` and ``scopes`` as its next call meets
    them (its user deactivated, the scopes its user's role no longer allows cut), ``mintedScopes`` as minted."""
    token = standing.token
    return {"id": token.id, "user": standing.email, "name": token.name, "scopes": list(standing.scopes),
            "mintedScopes": list(token.scopes), "project": token.project_id, "createdAt": token.created_at,
            "expiresAt": token.expires_at, "lastUsedAt": token.last_used_at, "revokedAt": token.revoked_at,
            "state": standing.state}


def token_scopes_cell(standing: TokenStanding) -> str:
    """The scopes a token can use, and the minted ones its user's role no longer allows, said so."""
    usable = " ".join(standing.scopes) or "none"
    if not standing.lost:
        return usable
    return f"{usable} (minted also {' '.join(standing.lost)}, which a {standing.role or 'user'} may not hold)"


def audit_json(entry: AuditEntry, email: str | None) -> dict[str, object]:
    return {"id": entry.id, "at": entry.at, "user": entry.user_id, "email": email, "token": entry.token_id,
            "action": entry.action, "target": entry.target, "detail": entry.detail}

