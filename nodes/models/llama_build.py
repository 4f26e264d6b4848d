"""What the installed llama.cpp was compiled for, read from the ggml-config.cmake its wheel carries.

pip builds llama-cpp-python from source; with -march=native (GGML_NATIVE ON, llama.cpp's default)
the library fits only CPUs like the build machine's, and pip's wheel cache hands that build to
every later venv. `python nodes/models/llama_build.py` exits 1 when the installed build is such a
one (the Makefile then rebuilds it), else 0; `--version` prints the installed version.
"""

from __future__ import annotations

import importlib.metadata
import platform
import re
import sys
from pathlib import Path

PACKAGE = "llama-cpp-python"
CONFIG = "lib/cmake/ggml/ggml-config.cmake"
# ggml's x86 instruction-set switches and the /proc/cpuinfo flag each one needs
CPU_FLAGS = {"GGML_AVX": "avx", "GGML_AVX2": "avx2", "GGML_FMA": "fma", "GGML_F16C": "f16c",
             "GGML_BMI2": "bmi2", "GGML_AVX512": "avx512f"}


def installed_version() -> str | None:
    try:
        return importlib.metadata.version(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        return None


def build_settings() -> dict[str, str] | None:
    """ggml's build settings (GGML_NATIVE, GGML_AVX2, ...); None without the package, {} when its
    wheel carries no ggml-config.cmake."""
    try:
        dist = importlib.metadata.distribution(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in dist.files or []:
        if str(file).replace("\\", "/").endswith(CONFIG):
            text = Path(str(dist.locate_file(file))).read_text(encoding="utf-8", errors="replace")
            return dict(re.findall(r'^set\((GGML_\w+) "([^"]*)"\)', text, re.MULTILINE))
    return {}


def is_portable(settings: dict[str, str]) -> bool:
    return settings.get("GGML_NATIVE") == "OFF"


def missing_cpu_features(settings: dict[str, str], cpuinfo: Path = Path("/proc/cpuinfo")) -> list[str]:
    """Instruction sets the build requires that this CPU lacks (x86-64 Linux only; else none known)."""
    if platform.machine().lower() not in ("x86_64", "amd64") or not cpuinfo.is_file():
        return []
    text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    line = next((ln for ln in text.splitlines() if ln.startswith("flags")), "")
    flags = set(line.partition(":")[2].split())
    return [name.removeprefix("GGML_") for name, flag in CPU_FLAGS.items()
            if settings.get(name) == "ON" and flag not in flags]


def main(argv: list[str]) -> int:
    if argv[1:] == ["--version"]:
        print(installed_version() or "")
        return 0
    settings = build_settings()
    if settings == {}:
        print(f"note: {PACKAGE} {installed_version()} has no {CONFIG}: cannot tell which CPUs its llama.cpp is built for")
    return 0 if not settings or is_portable(settings) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
