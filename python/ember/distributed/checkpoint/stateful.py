"""Stateful: what checkpoint.save and load call state_dict() / load_state_dict() on."""

from typing import Any, Protocol, runtime_checkable

__all__ = ["Stateful"]


@runtime_checkable
class Stateful(Protocol):
    """An object with state_dict() and load_state_dict(state_dict) (modules and optimizers
    are): save stores its state_dict(), load fills one in and passes it to load_state_dict."""

    def state_dict(self) -> dict[str, Any]:
        """state_dict() -> dict

        The object's state."""
        ...

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """load_state_dict(state_dict) -> None

        Restores the object's state."""
        ...
