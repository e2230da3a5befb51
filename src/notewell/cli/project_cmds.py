"""notewell project list | add | archive | unarchive | set."""

from __future__ import annotations

from typing import Annotated

import typer

from notewell.access.principal import LOCAL_OWNER
from notewell.cli.access_views import project_json
from notewell.cli.app import DbOpt, JsonOpt, VaultOpt, app, console, print_json, runtime
from notewell.cli.rows import Col, show_rows
from notewell.records.identity import Project

project_app = typer.Typer(help="List, add, archive and describe projects (homes stay private to their owners).",
                          no_args_is_help=True)
app.add_typer(project_app, name="project")

IdArg = Annotated[str, typer.Argument(metavar="ID", help="The project id (its vault folder's name).")]
POSITIONAL = {"project": "ID"}
NameOpt = Annotated[str | None, typer.Option("--name", help="Display name (kept over the README's name).")]
DescriptionOpt = Annotated[str | None, typer.Option("--description", help="One-line description.")]
FrameworkOpt = Annotated[str | None, typer.Option("--framework", help="Framework, e.g. react.")]
LanguageOpt = Annotated[str | None, typer.Option("--language", help="Language, e.g. typescript.")]


def _report(project: Project, json_out: bool, message: str) -> None:
    if json_out:
        print_json(project_json(project))
    else:
        console.print(message, highlight=False, markup=False)


@project_app.command("list")
def project_list(archived: Annotated[bool, typer.Option("--archived", help="Include archived projects.")] = False,
                 vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False) -> None:
    """List the ordinary projects (active; with --archived, archived ones too)."""
    with runtime(vault, db) as rt:
        projects = rt.administration.projects(LOCAL_OWNER, include_archived=archived)
        if json_out:
            print_json([project_json(p) for p in projects])
            return
        show_rows([Col("id", whole=True), Col("name"), Col("status"), Col("description")],
                  [(p.id, p.name, p.status, p.description) for p in projects],
                  empty="No projects" + ("" if archived else " (archived ones are listed with --archived)")
                        + "; each top-level folder of the vault is one once 'notewell index' ran")


@project_app.command("add")
def project_add(project_id: IdArg, name: NameOpt = None, description: DescriptionOpt = None,
                framework: FrameworkOpt = None, language: LanguageOpt = None,
                vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False) -> None:
    """Add an ordinary project (a vault folder of the same name holds its documents)."""
    with runtime(vault, db) as rt:
        project = rt.administration.add_project(LOCAL_OWNER, project_id, name=name, description=description or "",
                                        framework=framework, language=language)
        _report(project, json_out, f"Added project {project.id} ({project.name})")


@project_app.command("archive")
def project_archive(project_id: IdArg, vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False) -> None:
    """Archive a project: hidden from everyone (admins can list it with --archived)."""
    with runtime(vault, db, arguments=POSITIONAL) as rt:
        project = rt.administration.archive_project(LOCAL_OWNER, project_id)
        _report(project, json_out, f"Project {project.id} is archived")


@project_app.command("unarchive")
def project_unarchive(project_id: IdArg, vault: VaultOpt = None, db: DbOpt = None,
                      json_out: JsonOpt = False) -> None:
    """Make an archived project active again."""
    with runtime(vault, db, arguments=POSITIONAL) as rt:
        project = rt.administration.unarchive_project(LOCAL_OWNER, project_id)
        _report(project, json_out, f"Project {project.id} is active")


@project_app.command("set")
def project_set(project_id: IdArg, name: NameOpt = None, description: DescriptionOpt = None,
                framework: FrameworkOpt = None, language: LanguageOpt = None,
                vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False) -> None:
    """Change a project's name, description, framework or language."""
    with runtime(vault, db, arguments=POSITIONAL) as rt:
        project = rt.administration.set_project(LOCAL_OWNER, project_id, name=name, description=description,
                                        framework=framework, language=language)
        _report(project, json_out, f"Project {project.id}: {project.name}")
