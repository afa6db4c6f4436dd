"""Every YAML document PyYAML composes in the server, its aliases bounded.

moto parses what callers send with ``yaml.safe_load`` (SSM documents, API Gateway's and
HTTP APIs' imported definitions, OpenSearch Ingestion pipelines …), and PyYAML's
``SafeLoader`` has no bound on aliases: an alias is the node it names, so ten aliases of
ten aliases … build a value that is small in memory and enormous once walked. A
356-byte SSM document became 30 MB at ``GetDocument``, and deeper ones more ("billion
laughs"). PyYAML composes every document of its Python loaders (``SafeLoader``,
``Loader``, ``FullLoader`` and theirs) in ``Composer.compose_document``; the patched one
measures the document as its aliases resolve it, over its distinct nodes (milliseconds),
and refuses, with a ``ComposerError`` (a ``yaml.YAMLError``, which each service answers
with its own 400), one whose aliases add more than :data:`ALIAS_NODES` nodes or
:data:`ALIAS_CHARACTERS` characters of scalars to what is written. A document without
aliases is never refused here, however large (each service bounds its size).

The node bound is cfn-lint's for a template (``_MAX_EXPANDED_NODES``, 250,000), which the
local cloud's template parser already applies (:mod:`localcloud.cloudformation.template_limits`);
the character bound is API Gateway's 10 MB payload, the largest request body the
local cloud reads.
"""

from __future__ import annotations

from typing import Final

from yaml.composer import Composer, ComposerError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from localcloud.patches.registry import Method, Patch

__all__ = ["ALIAS_CHARACTERS", "ALIAS_NODES", "PATCHES", "check_aliases"]

ALIAS_NODES: Final = 250_000
ALIAS_CHARACTERS: Final = 10 * 1024 * 1024


def check_aliases(root: Node) -> None:
    """Refuse ``root`` when its aliases add more than :data:`ALIAS_NODES` nodes or
    :data:`ALIAS_CHARACTERS` characters of scalars to the document as written.

    Raises:
        ComposerError: naming the bound passed, at the document's start.
    """
    resolved: dict[int, tuple[int, int]] = {}  # id(node) -> (nodes, characters), resolved
    written = [0, 0]  # the distinct nodes and their characters

    def size(node: Node) -> tuple[int, int]:
        known = resolved.get(id(node))
        if known is not None:
            return known
        nodes, characters = 1, 0
        if isinstance(node, ScalarNode):
            characters = len(node.value)
        elif isinstance(node, SequenceNode | MappingNode):
            children = (
                node.value
                if isinstance(node, SequenceNode)
                else [part for pair in node.value for part in pair]
            )
            for child in children:
                more_nodes, more_characters = size(child)
                nodes += more_nodes
                characters += more_characters
        written[0] += 1
        written[1] += characters if isinstance(node, ScalarNode) else 0
        if nodes - written[0] > ALIAS_NODES or characters - written[1] > ALIAS_CHARACTERS:
            raise ComposerError(
                None,
                None,
                f"the document's YAML aliases resolve to more than {ALIAS_NODES:,} nodes or "
                f"{ALIAS_CHARACTERS:,} characters beyond what it holds (an alias bomb)",
                root.start_mark,
            )
        resolved[id(node)] = (nodes, characters)
        return nodes, characters

    size(root)


def _bounded(original: Method) -> Method:
    def compose_document(self: Composer) -> Node | None:
        node: Node | None = original(self)
        if node is not None:
            check_aliases(node)
        return node

    return compose_document


PATCHES: Final = (
    Patch(
        Composer,
        "compose_document",
        ("self",),
        _bounded,
        "a YAML document whose aliases add more than 250,000 nodes or 10 MB is refused "
        "(yaml.safe_load had no bound)",
    ),
)
