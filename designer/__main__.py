"""``python -m designer``: the ``dpu-designer`` program (``designer.cli.console``)."""

from designer.cli import console

if __name__ == "__main__":
    console()
