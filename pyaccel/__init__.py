"""pyaccel: portable accelerator compute from Python."""
__version__ = "0.1.0"
