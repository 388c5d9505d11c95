"""The portable llama-cpp-python installer: flags per machine, a cache key that follows the flags, and a version
in step with the project's `local` extra."""

from __future__ import annotations

import importlib.util
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _script():
    spec = importlib.util.spec_from_file_location("build_llama", ROOT / "scripts" / "build_llama.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_x86_build_is_portable_and_arm_gets_no_x86_flags():
    script = _script()
    x86 = script.build_flags("x86_64")
    assert "-DGGML_NATIVE=OFF" in x86 and "-DGGML_AVX2=ON" in x86
    assert {"-DGGML_AMX_TILE=OFF", "-DGGML_AMX_INT8=OFF", "-DGGML_AVX512=OFF"} <= set(x86)
    arm = script.build_flags("aarch64")
    assert arm == ["-DGGML_NATIVE=OFF"]
    assert not any("AVX" in f or "AMX" in f or "FMA" in f for f in arm)


def test_cache_key_changes_with_flags_version_and_machine():
    script = _script()
    base = script.cache_key("0.3.36", "x86_64", script.build_flags("x86_64"))
    assert base != script.cache_key("0.3.36", "x86_64", ["-DGGML_NATIVE=ON"])
    assert base != script.cache_key("0.3.37", "x86_64", script.build_flags("x86_64"))
    assert base != script.cache_key("0.3.36", "aarch64", script.build_flags("aarch64"))


def test_cache_root_honours_ragdive_cache_dir(monkeypatch, tmp_path):
    script = _script()
    monkeypatch.setenv("RAGDIVE_CACHE_DIR", str(tmp_path))
    assert script.cache_root() == tmp_path


def test_script_version_satisfies_the_local_extra():
    script = _script()
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["local"]
    llama = next(r for r in extra if r.startswith("llama-cpp-python"))
    low, high = re.search(r">=([\d.]+),<([\d.]+)", llama).groups()  # type: ignore[union-attr]
    version = tuple(int(p) for p in script.VERSION.split("."))
    assert tuple(int(p) for p in low.split(".")) <= version < tuple(int(p) for p in high.split("."))
    assert script.VERSION == low, "the extra's floor is the version the script builds"
