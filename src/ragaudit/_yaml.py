"""YAML read safely: plain data only, bounded alias expansion, short one-line errors.

Every YAML file ragaudit reads (golden sets, label mappings, chunk-label files, price tables)
goes through here.  Tags that
build Python objects (``!!python/object/apply:os.system``) are refused, and so is a document
whose aliases (``*a``) would expand to more than :data:`MAX_NODES` values -- the "billion
laughs" bomb, which otherwise eats memory long after parsing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragaudit.exceptions import FormatError

if TYPE_CHECKING:
    import yaml

__all__ = ["MAX_NODES", "compose_yaml", "construct_yaml", "load_yaml"]

MAX_NODES = 1_000_000  # values in the document once every alias is expanded


def _problem(exc: Exception) -> tuple[str, int | None]:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return problem[:160], None if mark is None else mark.line + 1


def expanded_size(root: yaml.Node) -> int:
    """Number of values in the document with every alias expanded (linear time).

    An alias that refers to a node it sits inside (``a: &a [*a]``) would expand forever:
    that raises ``ValueError`` instead of looping.

    >>> import yaml
    >>> expanded_size(yaml.compose("a: &x [1, 2]\\nb: [*x, *x]"))
    13
    >>> expanded_size(yaml.compose("a: &a [*a]"))
    Traceback (most recent call last):
    ...
    ValueError: an alias refers to a node that contains it
    """
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()  # entered, children not summed yet: the current path
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        children = _children(node)
        if children_done or not children:
            sizes[id(node)] = 1 + sum(sizes[id(child)] for child in children)
            open_nodes.discard(id(node))
            continue
        if id(node) in open_nodes:  # reached again from inside itself: a cycle
            raise ValueError("an alias refers to a node that contains it")
        open_nodes.add(id(node))
        stack.append((node, True))
        for child in children:
            if id(child) in open_nodes:
                raise ValueError("an alias refers to a node that contains it")
            if id(child) not in sizes:
                stack.append((child, False))
    return sizes[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    import yaml

    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def compose_yaml(text: str, path: str | None) -> yaml.Node | None:
    """The node tree of ``text`` (safe loader), or None for an empty document.

    Raises
    ------
    FormatError
        On a syntax error, nesting too deep to parse, or more than :data:`MAX_NODES` values
        after expanding aliases.
    """
    import yaml  # imported here: reading TREC files does not need it

    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        problem, line = _problem(exc)
        raise FormatError(f"invalid YAML: {problem}", path=path, line=line) from None
    except RecursionError:
        raise FormatError("invalid YAML: nested too deeply", path=path) from None
    try:
        size = 0 if root is None else expanded_size(root)
    except ValueError:  # a self-referring alias: expanding it would never end
        raise FormatError(
            "expected aliases (*name) to refer to values outside themselves, found one "
            "that refers to a node containing it (as in `a: &a [*a]`); write the value out",
            path=path,
            line=None if root is None else root.start_mark.line + 1,
        ) from None
    if root is not None and size > MAX_NODES:
        raise FormatError(
            f"expected at most {MAX_NODES:,} values once aliases (*name) are expanded, "
            "found more; write the values out instead of repeating anchors",
            path=path,
            line=root.start_mark.line + 1,
        )
    return root


def construct_yaml(node: yaml.Node, path: str | None) -> Any:
    """Plain Python data for ``node``: mappings, lists, strings, numbers, booleans, null.

    Raises
    ------
    FormatError
        On a tag that is not plain data (for example ``!!python/object``).
    """
    import yaml

    try:
        return yaml.SafeLoader("").construct_object(node, deep=True)
    except yaml.YAMLError as exc:
        problem, line = _problem(exc)
        raise FormatError(
            f"expected plain YAML data, found {problem}", path=path, line=line
        ) from None
    except RecursionError:
        raise FormatError("invalid YAML: nested too deeply", path=path) from None


def load_yaml(text: str, path: str | None) -> Any:
    """``yaml.safe_load`` with the bounds above.

    >>> load_yaml("q1: {d1: 2}", "labels.yaml")
    {'q1': {'d1': 2}}
    """
    root = compose_yaml(text, path)
    return None if root is None else construct_yaml(root, path)
