"""``python -m arena.adapters.acpc [--game FILE] [--address A --token T | --key K] -- COMMAND [ARGS...]``: the
ACPC bridge (``arena acpc-bridge`` is the same)."""

from arena.adapters.acpc.bridge import main

raise SystemExit(main())
