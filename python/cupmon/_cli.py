"""The ``cupmon`` console script: runs the ``cupmon`` binary bundled in the
package (the CLI is Rust; this only finds it)."""

from __future__ import annotations

import os
import sys


def binary_path() -> str:
    """The bundled ``cupmon`` executable (next to ``libcupmon_inject.so``,
    where ``cupmon run`` looks for the injection library)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "cupmon")


def main() -> None:
    path = binary_path()
    if not os.access(path, os.X_OK):
        sys.exit(
            f"cupmon: the cupmon binary is missing from the package ({path}); reinstall cupmon"
        )
    # `cupmon sql` runs DuckDB in this Python (where `pip install 'cupmon[sql]'`
    # put it), unless the user chose another.
    os.environ.setdefault("CUPMON_PYTHON", sys.executable)
    # exec, not a child: signals, Ctrl-C and the exit code stay the binary's own.
    os.execv(path, ["cupmon", *sys.argv[1:]])


if __name__ == "__main__":
    main()
