"""Print the installed version of each distribution named on the command line (tox fw-* environments)."""

from __future__ import annotations

import sys
from importlib.metadata import PackageNotFoundError, version


def main(names: list[str]) -> None:
    for name in names:
        try:
            print(f"{name} {version(name)}")
        except PackageNotFoundError:
            print(f"{name} (not installed)")


if __name__ == "__main__":
    main(sys.argv[1:])
