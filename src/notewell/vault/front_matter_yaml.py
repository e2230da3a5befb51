"""YAML as front matter is read: PyYAML's safe loader without aliases.

An alias (``*name``) repeats what its anchor names without its bytes: thirty anchors of two aliases each make
a 600-byte block whose value is a billion items, which a title or a comparison then walks (seconds to hours of
one core, and memory). No front matter needs one, so a block that holds one is not read as YAML: the indexer
takes it for no front matter, and an edit refuses it.
"""

from __future__ import annotations

import yaml


class _NoAliases(yaml.SafeLoader):
    def compose_node(self, parent: yaml.Node | None, index: object) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            raise yaml.composer.ComposerError(None, None, "an alias (*name) is not read in front matter; write "
                                                          "the value out", None)
        return super().compose_node(parent, index)  # type: ignore[arg-type]


def load_yaml(text: str) -> object:
    """``text`` read as YAML by the safe loader, refusing aliases (yaml.YAMLError, as any YAML that is not)."""
    return yaml.load(text, Loader=_NoAliases)
