"""The seed's notation for a stack (docs/PROTOCOL.md section 4)."""
from __future__ import annotations

from typing import Any, Iterable, Mapping


def render_stack(items: Iterable[Mapping[str, Any]]) -> str:
    """Renders stack items (bottom first, as ``session.get`` returns them) in the seed's notation.

    ``P1 W1(*P) W2(*C)~ N1``: ``(*P)`` marks a PWA web view, ``(*C)`` a classic one, a trailing
    ``~`` a web view without a connected page; placeholders and native screens are their ids.
    This is the daemon's own rendering (``SessionEngine.render``, ``bridged sessions``).
    """
    out = []
    for item in items:
        text = str(item.get("id", "?"))
        if item.get("kind") == "webview":
            text += "(*P)" if item.get("mode") == "pwa" else "(*C)"
            if item.get("connected") is False:
                text += "~"
        out.append(text)
    return " ".join(out)


def stack_ids(items: Iterable[Mapping[str, Any]]) -> str:
    """The ids alone, ``P1 W1 W2``: the form the contract's examples use."""
    return " ".join(str(item.get("id", "?")) for item in items)
