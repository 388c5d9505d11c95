"""One registry per plug-in kind: name -> object, a lazy ``"module:attr"`` string, or an installed distribution's
entry point in the group ``ragdive.<kind>``.

The kinds and what an entry is (each registry lives beside the code that uses it):

==============  =================================  ============================================================
kind            registry                           an entry is
==============  =================================  ============================================================
``metrics``     ``evaluation.metrics.METRICS``     a class decorated with ``@metric(...)`` (its MetricInfo)
``models``      ``models.registry.PROVIDERS``      a backend factory ``(name, **options) -> ModelBackend``
``targets``     ``config.TARGET_TYPES``            a ``TargetType(config=<pydantic class>, build=<factory>)``
``importers``   ``interop.imports.IMPORTERS``      an ``Importer(name, version, read, summary)``
``exporters``   ``interop.export.EXPORTERS``       an ``Exporter(name, write, summary)``
``executors``   ``executors.EXECUTORS``            an ``ExecutorType(summary, open)`` (open: -> ``Executor``)
``retrievers``  ``config.RETRIEVERS``              a ``RetrieverType(build, needs_embedder)``
``rerankers``   ``config.RERANKERS``               a ``RerankerType(build, needs_embedder)``
==============  =================================  ============================================================

Adding one from your own package, without editing ragdive: declare an entry point in your ``pyproject.toml``::

    [project.entry-points."ragdive.metrics"]
    politeness = "my_pkg.metrics:Politeness"      # a TurnMetric subclass decorated with @metric("politeness", ...)

    [project.entry-points."ragdive.targets"]
    echo = "my_pkg.targets:ECHO"                  # TargetType(config=EchoConfig, build=build_echo)

and ``pip install`` it: ``type: echo`` and ``metrics: [politeness]`` then work in YAML. In-process (a notebook, a
test), ``REGISTRY.add("name", obj_or_"module:attr")`` does the same. The entry's name is the name users write;
loading it is deferred to the first use, so an unused plug-in costs nothing and a broken one fails only when named.
A name that is not known is one ConfigError naming the closest known name and listing them all.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterable
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Generic, TypeVar

from .errors import ConfigError

T = TypeVar("T")


def closest(name: str, known: Iterable[str]) -> str | None:
    """The known name most like ``name`` (a typo's likely intent), or None when nothing is close."""
    found = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return found[0] if found else None


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean `x`?)`` or nothing."""
    match = closest(name, known)
    return f" (did you mean `{match}`?)" if match else ""


class Registry(Generic[T]):
    """Names of one plug-in kind -> objects, resolved on first use.

    ``adapt`` turns what an entry point or a lazy string loads into the registry's type (metrics load a class and
    keep its MetricInfo); ``noun`` names the kind in errors ("target type", "export format")."""

    def __init__(
        self,
        kind: str,
        *,
        noun: str,
        builtins: dict[str, T | str] | None = None,
        adapt: Callable[[Any], T] | None = None,
    ) -> None:
        self.kind = kind
        self.group = f"ragdive.{kind}"
        self.noun = noun
        self._entries: dict[str, T | str] = dict(builtins or {})
        self._adapt = adapt
        self._entry_points: dict[str, EntryPoint] | None = None

    def add(self, name: str, entry: T | str, *, replace: bool = False) -> None:
        """Register ``entry`` (an object, or ``"module:attr"`` imported on first use) under ``name``. A second entry
        under a name already taken is an error unless ``replace``: two plug-ins must not silently shadow each other."""
        current = self._entries.get(name)
        if current is not None and current is not entry and not replace:
            raise ConfigError(f"{self.noun} {name!r} is registered twice")
        self._entries[name] = entry

    def remove(self, name: str) -> None:
        """Forget an entry added in-process (tests, notebooks)."""
        self._entries.pop(name, None)

    def builtin_names(self) -> list[str]:
        """Names added in-process (ragdive's own and any ``add``), without scanning installed distributions."""
        return list(self._entries)

    def names(self) -> list[str]:
        """Every known name: the in-process entries, then installed distributions' entry points."""
        return list(self._entries) + [n for n in self._plugins() if n not in self._entries]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self._entries or name in self._plugins())

    def get(self, name: str) -> T:
        """The object registered as ``name``, imported if it was lazy; an unknown name is one ConfigError."""
        if name in self._entries:
            entry = self._entries[name]
            if not isinstance(entry, str):
                return entry
            loaded = self._load(name, lambda: import_entry(entry))
        elif name in self._plugins():
            loaded = self._load(name, self._plugins()[name].load)
        else:
            raise self.unknown(name)
        self._entries[name] = loaded
        return loaded

    def unknown(self, name: str, *, known: Iterable[str] | None = None) -> ConfigError:
        """The one error for a name that is not registered: the closest match, then every known name."""
        names = list(self.names() if known is None else known)
        return ConfigError(f"unknown {self.noun} {name!r}{did_you_mean(name, names)}; known: {', '.join(names)}")

    def reload_plugins(self) -> None:
        """Scan installed distributions again (after installing one in a running process)."""
        self._entry_points = None

    def _plugins(self) -> dict[str, EntryPoint]:
        if self._entry_points is None:
            self._entry_points = {ep.name: ep for ep in entry_points(group=self.group)}
        return self._entry_points

    def _load(self, name: str, load: Callable[[], Any]) -> T:
        try:
            obj = load()
        except ConfigError:
            raise
        except Exception as exc:  # a plug-in that fails to import is the user's config problem, said in one line
            raise ConfigError(f"{self.noun} {name!r} could not be loaded: {type(exc).__name__}: {exc}") from exc
        return self._adapt(obj) if self._adapt is not None else obj  # type: ignore[no-any-return]


def import_entry(spec: str) -> Any:
    """The object a lazy entry ``module:attr.path`` names."""
    module_name, _, attr = spec.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj
