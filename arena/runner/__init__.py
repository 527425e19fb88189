"""Layer 6: running bots as local subprocesses, and matches over the referee's gRPC server."""
