"""``python -m cupmon ...`` is the ``cupmon`` command."""

from ._cli import main

main()
