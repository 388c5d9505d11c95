#!/usr/bin/env python3
"""Install llama-cpp-python built with portable CPU flags, from a wheel cache keyed by those flags.

Why: pip builds llama-cpp-python with ``GGML_NATIVE=ON`` (``-march=native``). On CPUs that advertise AMX that
build crashes in ggml's AMX kernel at the first decode, and pip's own wheel cache ignores ``CMAKE_ARGS``, so once
such a wheel is cached every new virtual environment silently gets it again. This script never reads pip's wheel
cache: it builds once with explicit flags (x86-64: AVX2/FMA/F16C, no AVX-512, no AMX; other machines: the
compiler's baseline) into ``<cache>/wheels/llama-cpp-python/<version>-<python>-<machine>-<flags hash>/`` and
installs that wheel into the running interpreter's environment. Run it before ``pip install -e '.[local]'``,
which then finds the requirement satisfied.

Stdlib only, so it runs before anything else is installed. ``--print-key`` prints the cache key and exits.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

VERSION = "0.3.36"  # keep in step with the `local` extra in pyproject.toml

X86_FLAGS = [
    "-DGGML_NATIVE=OFF",
    "-DGGML_AVX=ON",
    "-DGGML_AVX2=ON",
    "-DGGML_FMA=ON",
    "-DGGML_F16C=ON",
    "-DGGML_AVX512=OFF",
    "-DGGML_AMX_TILE=OFF",
    "-DGGML_AMX_INT8=OFF",
    "-DGGML_AMX_BF16=OFF",
]
OTHER_FLAGS = ["-DGGML_NATIVE=OFF"]  # ARM and the rest: no x86 flags, the compiler's portable baseline


def build_flags(machine: str) -> list[str]:
    return X86_FLAGS if machine.lower() in {"x86_64", "amd64"} else OTHER_FLAGS


def cache_root() -> Path:
    """ragdive's folder of the user's cache: ragdive/user_cache.py's rule, copied (this script runs before ragdive
    is installed); tests/test_user_cache.py checks that the two agree."""
    explicit = os.environ.get("RAGDIVE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ragdive"


def cache_key(version: str, machine: str, flags: list[str]) -> str:
    digest = hashlib.sha256(" ".join(flags).encode()).hexdigest()[:12]
    python = f"cp{sys.version_info.major}{sys.version_info.minor}"
    return f"{version}-{python}-{machine.lower()}-{digest}"


def pip(*args: str, env: dict[str, str] | None = None) -> None:
    subprocess.run([sys.executable, "-m", "pip", *args], check=True, env=env)


def build_wheel(version: str, flags: list[str], folder: Path) -> Path:
    """Build the wheel from source with ``flags``, never touching pip's wheel cache."""
    env = dict(os.environ, CMAKE_ARGS=" ".join(flags), FORCE_CMAKE="1")
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
    with tempfile.TemporaryDirectory(prefix="llama-build-") as tmp:
        print(f"building llama-cpp-python {version} with {' '.join(flags)} (about 5 minutes on 2 cores)", flush=True)
        pip(
            "wheel", "--no-deps", "--no-cache-dir", "--no-binary", "llama-cpp-python",
            f"llama-cpp-python=={version}", "--wheel-dir", tmp, env=env,
        )  # fmt: skip
        built = sorted(Path(tmp).glob("llama_cpp_python-*.whl"))
        if not built:
            raise SystemExit("pip wheel produced no llama-cpp-python wheel")
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / built[0].name
        partial = target.with_suffix(".partial")
        shutil.copy2(built[0], partial)
        os.replace(partial, target)  # a concurrent reader never sees half a wheel
    (folder / "build.json").write_text(json.dumps({"version": version, "cmake_args": flags}, indent=2) + "\n")
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default=VERSION, help="llama-cpp-python release to build")
    parser.add_argument("--rebuild", action="store_true", help="build again even if the cache holds a wheel")
    parser.add_argument("--print-key", action="store_true", help="print the cache key and exit")
    args = parser.parse_args(argv)

    machine = platform.machine() or "unknown"
    flags = build_flags(machine)
    key = cache_key(args.version, machine, flags)
    if args.print_key:
        print(key)
        return 0
    folder = cache_root() / "wheels" / "llama-cpp-python" / key
    wheels = sorted(folder.glob("llama_cpp_python-*.whl"))
    if wheels and not args.rebuild:
        wheel = wheels[0]
        print(f"llama-cpp-python {args.version}: portable wheel from the ragdive cache ({key})", flush=True)
    else:
        wheel = build_wheel(args.version, flags, folder)
    # --force-reinstall replaces a native build already in this environment; dependencies come with the
    # project's own install (pip install -e '.[local]') or here when they are missing.
    pip("install", "--quiet", "--force-reinstall", "--no-deps", str(wheel))
    pip("install", "--quiet", str(wheel))
    print(f"installed {wheel.name} ({key})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
