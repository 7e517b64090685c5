"""cupmon's PEP 517 build backend: maturin, plus the two native artifacts that
maturin does not build.

maturin builds the extension module ``cupmon._cupmon`` (crate cupmon-python)
and packs ``python/cupmon``. The wheel must also carry the injection library
``libcupmon_inject.so`` (the one monitor of a process, which the live API
loads with ctypes) and the ``cupmon`` binary (run by the ``cupmon`` console
script). So ``build_wheel``/``build_editable`` first run ``cargo build -p
cupmon-inject -p cupmon-cli`` and copy both into ``python/cupmon/`` (where git
ignores them); ``[tool.maturin] include`` puts them into the wheel (maturin
leaves git-ignored files out unless they are included by name).

Profile: release, or ``$CUPMON_CARGO_PROFILE`` (e.g. ``dev`` for quick test
builds; it is then passed on to maturin too unless ``MATURIN_PEP517_ARGS`` is set).

Without pip: ``python python/build_backend/cupmon_build.py [PROFILE]`` copies
the natives into place, after which ``maturin build``/``maturin develop`` work.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "cupmon"
NATIVES = ("libcupmon_inject.so", "cupmon")


def _profile() -> str:
    return os.environ.get("CUPMON_CARGO_PROFILE") or "release"


def build_natives(profile: str | None = None) -> None:
    """Build the injection library and the CLI, and copy them into the package."""
    profile = profile or _profile()
    cargo = os.environ.get("CARGO", "cargo")
    cmd = [cargo, "build", "--profile", profile, "-p", "cupmon-inject", "-p", "cupmon-cli"]
    print(f"cupmon: building the injection library and the CLI: {' '.join(cmd)}", file=sys.stderr)
    sys.stderr.flush()
    subprocess.run(cmd, cwd=ROOT, check=True)
    target = Path(os.environ.get("CARGO_TARGET_DIR") or "target")
    if not target.is_absolute():
        target = ROOT / target
    out = target / ("debug" if profile == "dev" else profile)
    strip = shutil.which("strip")
    for name in NATIVES:
        # Replace rather than overwrite: a running copy of the old file stays intact.
        staged = PACKAGE / f".{name}.tmp"
        shutil.copy2(out / name, staged)
        if strip and profile != "dev":
            # Debug line tables are 3/4 of the size; symbols stay for backtraces.
            subprocess.run([strip, "--strip-debug", str(staged)], check=True)
        os.replace(staged, PACKAGE / name)


def _maturin_profile() -> None:
    if os.environ.get("CUPMON_CARGO_PROFILE") and "MATURIN_PEP517_ARGS" not in os.environ:
        os.environ["MATURIN_PEP517_ARGS"] = f"--profile {_profile()}"


# PEP 517 hooks. maturin is imported on use, so that the script also runs
# without it (to stage the natives for `maturin build`).


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    import maturin

    build_natives()
    _maturin_profile()
    return maturin.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    import maturin

    build_natives()
    _maturin_profile()
    return maturin.build_editable(wheel_directory, config_settings, metadata_directory)


def _delegate(name):
    def hook(*args, **kwargs):
        import maturin

        return getattr(maturin, name)(*args, **kwargs)

    hook.__name__ = name
    return hook


# The hooks that need nothing beyond maturin.
build_sdist = _delegate("build_sdist")
get_requires_for_build_wheel = _delegate("get_requires_for_build_wheel")
get_requires_for_build_editable = _delegate("get_requires_for_build_editable")
get_requires_for_build_sdist = _delegate("get_requires_for_build_sdist")
prepare_metadata_for_build_wheel = _delegate("prepare_metadata_for_build_wheel")


if __name__ == "__main__":
    build_natives(sys.argv[1] if len(sys.argv) > 1 else None)
