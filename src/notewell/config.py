"""Where the vault and the store are, the indexing limits, and KEA's extractor.

Precedence, highest first: command-line flags, environment (NOTEWELL_VAULT, NOTEWELL_DB), the vault's
notewell.toml, built-in defaults. KEA's extractor is set in the environment only (``KeaSettings``: its keys
are secrets, kept out of files a vault may share).
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from notewell.errors import ConfigError

DEFAULT_FILE_TYPES: tuple[str, ...] = (
    ".md", ".markdown", ".txt", ".rst", ".org", ".csv", ".json", ".yaml", ".yml", ".toml",
)
DEFAULT_MAX_FILE_BYTES = 2 * 1024 * 1024
INDEX_DIR_NAME = ".notewell"
TRASH_DIR_NAME = "trash"  # in INDEX_DIR_NAME: a deleted note's bytes, at <trash id>/<vault path>
CONFIG_FILE_NAME = "notewell.toml"


KEA_DAILY_CALLS_DEFAULT = 500
KEA_DAILY_TOKENS_DEFAULT = 2_000_000
KEA_MODEL_MAX_CHARS = 200
KEA_TIMEOUT_SECONDS_DEFAULT = 120.0  # one call's wait for the provider's answer
KEA_TIMEOUT_SECONDS_MAX = 240.0  # below the job's lease (services/jobs.py, 300 s): a call never outlives it
KEA_BREAKER_SECONDS_DEFAULT = 300.0  # after a call the provider did not answer, its calls wait this long
KEA_BREAKER_SECONDS_MAX = 86_400.0
KEA_KEY_VARIABLES = ("DASHSCOPE_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "KEA_API_KEY")
KEA_URL_VARIABLES = ("KEA_BASE_URL", "DASHSCOPE_BASE_URL", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL")


@dataclass(frozen=True)
class KeaSettings:
    """KEA's extractor (docs/brain.md, "The extractors"): ``model`` None is the deterministic miner; otherwise a
    language model, its provider chosen by the model's prefix (services/kea_routing.py). ``keys`` and ``urls``
    hold the variables of KEA_KEY_VARIABLES and KEA_URL_VARIABLES that are set; a key is never shown."""

    model: str | None = None
    daily_calls: int = KEA_DAILY_CALLS_DEFAULT
    daily_tokens: int = KEA_DAILY_TOKENS_DEFAULT
    timeout_seconds: float = KEA_TIMEOUT_SECONDS_DEFAULT  # KEA_TIMEOUT_SECONDS
    breaker_seconds: float = KEA_BREAKER_SECONDS_DEFAULT  # KEA_BREAKER_SECONDS
    keys: Mapping[str, str] = field(default_factory=dict, repr=False)
    urls: Mapping[str, str] = field(default_factory=dict)


def _whole(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit():
        raise ConfigError(f"{name}: {raw!r} is not a whole number; set it to 0 or more, or unset it for {default}")
    return int(raw)


def _seconds(env: Mapping[str, str], name: str, default: float, low: float, high: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not low <= value <= high:  # NaN too
        raise ConfigError(f"{name}: {raw!r} is not a number of seconds from {low:g} to {high:g}; set one, or unset "
                          f"it for {default:g}")
    return value


def _port_ok(url: str) -> bool:
    """Whether the URL's port, if it names one, is one a connection can use (urlsplit reads 0 to 65535, and
    raises ValueError for another number or anything else: doctor and the SDKs stopped there, untold why)."""
    try:
        port = urlsplit(url).port
    except ValueError:
        return False
    return port is None or port >= 1


def kea_settings(env: Mapping[str, str]) -> KeaSettings:
    """KEA's settings from an environment (os.environ, or a test's mapping): KEA_MODEL, KEA_DAILY_CALLS,
    KEA_DAILY_TOKENS, KEA_TIMEOUT_SECONDS, KEA_BREAKER_SECONDS, the provider keys and the base URLs."""
    model = env.get("KEA_MODEL", "").strip() or None
    if model is not None and (len(model) > KEA_MODEL_MAX_CHARS or any(c.isspace() for c in model)):
        raise ConfigError(f"KEA_MODEL: must be a model name without spaces, at most {KEA_MODEL_MAX_CHARS} "
                          "characters (such as qwen3-coder, claude-haiku-4-5, gpt-4o-mini), or unset")
    urls = {name: env[name].strip() for name in KEA_URL_VARIABLES if env.get(name, "").strip()}
    for name, url in urls.items():
        if not url.startswith(("http://", "https://")):
            raise ConfigError(f"{name}: {url!r} is not an http:// or https:// URL; fix it or unset it")
        if not _port_ok(url):
            raise ConfigError(f"{name}: the port must be a number from 1 to 65535 (such as http://localhost:8080/v1)"
                              ", or left out for the scheme's own; fix it or unset it")
    return KeaSettings(model=model, daily_calls=_whole(env, "KEA_DAILY_CALLS", KEA_DAILY_CALLS_DEFAULT),
                       daily_tokens=_whole(env, "KEA_DAILY_TOKENS", KEA_DAILY_TOKENS_DEFAULT),
                       timeout_seconds=_seconds(env, "KEA_TIMEOUT_SECONDS", KEA_TIMEOUT_SECONDS_DEFAULT, 0.1,
                                                KEA_TIMEOUT_SECONDS_MAX),
                       breaker_seconds=_seconds(env, "KEA_BREAKER_SECONDS", KEA_BREAKER_SECONDS_DEFAULT, 1.0,
                                                KEA_BREAKER_SECONDS_MAX),
                       keys={name: env[name].strip() for name in KEA_KEY_VARIABLES if env.get(name, "").strip()},
                       urls=urls)


def is_postgres_url(db: str) -> bool:
    """Does this --db value name a PostgreSQL database (a postgresql:// or postgres:// URL), not a SQLite file?"""
    return db.startswith(("postgresql://", "postgres://"))


@dataclass(frozen=True)
class Settings:
    vault: Path
    db: str
    file_types: tuple[str, ...] = DEFAULT_FILE_TYPES
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    semantic: bool = True  # meaning in the tolerant tools (docs/memory.md); notewell.toml: semantic = false
    git_commit: bool = False  # [writing] git_commit: commit each note write when the vault is a git work tree
    kea: KeaSettings = field(default_factory=KeaSettings)  # KEA's extractor, from the environment

    @property
    def is_postgres(self) -> bool:
        return is_postgres_url(self.db)


def _read_toml(vault: Path) -> dict[str, object]:
    path = vault / CONFIG_FILE_NAME
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc}); fix or remove the file") from exc


def _file_types(value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError('notewell.toml: file_types must be a list of endings such as [".md", ".txt"]')
    return tuple(v if v.startswith(".") else f".{v}" for v in (t.lower() for t in value))


def _db_from_toml(conf: dict[str, object], vault: Path) -> str | None:
    value = conf.get("db")
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ConfigError("notewell.toml: db must be a string (a file path or a postgresql:// URL)")
    return _absolute_db(value, vault, "notewell.toml: db")


_LIBPQ_KEYS = re.compile(r"(?:^|\s)(?:host|hostaddr|port|dbname|user|password|sslmode)\s*=")


def _absolute_db(value: str, base: Path, field: str = "--db") -> str:
    """A postgresql:// URL as it is; a file path (or ``sqlite:PATH``, as migrate names one) made absolute against
    ``base``. Any other URL, or a libpq ``key=value`` string, is refused: taken as a file name, it made a SQLite
    store named after it (its password in the name)."""
    if is_postgres_url(value):
        return value
    if value.startswith("sqlite:"):
        value = value.removeprefix("sqlite:").removeprefix("//")
        if not value:
            raise ConfigError(f"{field}: sqlite: names no file; give sqlite:PATH or the path alone")
    elif "://" in value or _LIBPQ_KEYS.search(value):
        raise ConfigError(f"{field}: is neither a file path nor a postgresql:// URL; write a SQLite store as a path "
                          "(or sqlite:PATH) and a PostgreSQL one as postgresql://user@host:port/database")
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else (base / path).resolve())


def load_settings(vault: str | Path | None = None, db: str | None = None) -> Settings:
    """Build the settings for one command or server from flags, environment and notewell.toml.

    A relative --db or NOTEWELL_DB is taken from the working folder, a relative notewell.toml db from the
    vault. notewell.toml is checked whole, even where a flag overrides one of its values.
    """
    vault_path = Path(vault or os.environ.get("NOTEWELL_VAULT") or ".").expanduser().resolve()
    if not vault_path.is_dir():
        raise ConfigError(f"--vault: {vault_path} is not a folder; pass --vault DIR or set NOTEWELL_VAULT")
    conf = _read_toml(vault_path)
    _known(conf, "", _SETTINGS)
    toml_db = _db_from_toml(conf, vault_path)
    index_conf = conf.get("index", {})
    if not isinstance(index_conf, dict):
        raise ConfigError("notewell.toml: index must be a table: [index] with max_file_bytes and file_types")
    _known(index_conf, "[index] ", _INDEX_SETTINGS)
    file_types = _file_types(index_conf["file_types"]) if "file_types" in index_conf else DEFAULT_FILE_TYPES
    max_bytes = index_conf.get("max_file_bytes", DEFAULT_MAX_FILE_BYTES)
    if not isinstance(max_bytes, int) or isinstance(max_bytes, bool) or max_bytes <= 0:
        raise ConfigError("notewell.toml: [index] max_file_bytes must be a positive whole number of bytes")
    given_db = db or os.environ.get("NOTEWELL_DB")
    db_value = (_absolute_db(given_db, Path.cwd()) if given_db
                else toml_db or str(vault_path / INDEX_DIR_NAME / "index.db"))
    semantic = conf.get("semantic", True)
    if not isinstance(semantic, bool):
        raise ConfigError("notewell.toml: semantic must be true or false (false: the tolerant tools use words only)")
    return Settings(vault=vault_path, db=db_value, file_types=file_types, max_file_bytes=max_bytes,
                    semantic=semantic, git_commit=_git_commit(conf), kea=kea_settings(os.environ))


_SETTINGS = ("db", "semantic", "index", "writing")
_INDEX_SETTINGS = ("max_file_bytes", "file_types")


def _known(table: dict[str, object], where: str, known: tuple[str, ...]) -> None:
    """A setting misspelt or put in the wrong table is refused, naming it: ignored, it would change nothing
    while the file looked right (``semantik = false``, or ``semantic`` under ``[index]``)."""
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise ConfigError(f"notewell.toml: {where}has no setting {unknown[0]}; it takes "
                          f"{', '.join(k if k not in ('index', 'writing') else f'[{k}]' for k in known)}")


def _git_commit(conf: dict[str, object]) -> bool:
    writing = conf.get("writing", {})
    if not isinstance(writing, dict):
        raise ConfigError("notewell.toml: writing must be a table: [writing] with git_commit = true or false")
    value = writing.get("git_commit", False)
    if not isinstance(value, bool):
        raise ConfigError("notewell.toml: [writing] git_commit must be true or false")
    _known(writing, "[writing] ", ("git_commit",))
    return value


def reload_settings(settings: Settings) -> Settings:
    """``settings`` with the vault's notewell.toml read again, exactly as load_settings reads it (checked whole);
    the vault and the store stay the ones this process opened. A running watcher calls it before each sync."""
    return load_settings(settings.vault, settings.db)
