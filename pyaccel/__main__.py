"""``python -m pyaccel`` is the ``pyaccel`` command."""

from .cli import main

raise SystemExit(main())
