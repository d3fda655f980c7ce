"""The package version: the pswap binary's (the wheel build writes it)."""

__version__ = "0.0.0+dev"
