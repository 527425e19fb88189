"""arena: a gRPC referee for Texas Hold'em bots, with duplicate dealing, records and ratings."""

__version__ = "0.1.0"
