"""The backends by name. Adding one is a module with a `BACKEND` object and one line below;
nothing outside this package imports a backend by name."""

from __future__ import annotations

import importlib

from tcpeval.backends.protocol import Backend
from tcpeval.scenario import ScenarioError

DEFAULT = "sim"
_MODULES = {
    "lab": "tcpeval.backends.lab",
    "model": "tcpeval.backends.model",
    "probe": "tcpeval.backends.probe",
    "sim": "tcpeval.backends.sim",
}
_registered: dict[str, Backend] = {}


def register(backend: Backend) -> None:
    """Make `backend` known by its name (a plug-in, or a test), replacing one of that name."""
    _registered[backend.name] = backend


def names() -> list[str]:
    return sorted({*_MODULES, *_registered})


def get(backend: str | Backend) -> Backend:
    """The backend called `backend` (or `backend` itself); an unknown name is a ScenarioError
    listing the known ones."""
    if not isinstance(backend, str):
        return backend
    if backend in _registered:
        return _registered[backend]
    if backend not in _MODULES:
        raise ScenarioError(
            "--backend", backend, f"is not a backend (choose from {', '.join(names())})"
        )
    module = importlib.import_module(_MODULES[backend])
    return _registered.setdefault(backend, module.BACKEND)


def all_backends() -> list[Backend]:
    return [get(name) for name in names()]
