"""``python -m shoal``: the command-line interface."""

from shoal.cli import main

if __name__ == "__main__":
    main()
