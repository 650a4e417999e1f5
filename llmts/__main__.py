from __future__ import annotations

from llmts.server.cli import main

raise SystemExit(main())
