"""The ``onnxmini`` console script: runs the C++ CLI shipped inside the package."""
import os
import sys


def cli_path() -> str:
    """Path of the onnxmini CLI binary installed with this package."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "onnxmini")


def main() -> None:
    path = cli_path()
    if not os.path.exists(path):
        sys.exit(f"onnxmini: the CLI binary is not installed at {path}")
    os.execv(path, [path, *sys.argv[1:]])


if __name__ == "__main__":
    main()
