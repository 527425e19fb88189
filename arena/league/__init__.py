"""The league (layer above the runner): a long-running host where registered bots connect with API keys from
anywhere, are matched continuously, rated after every match and published as they go (``arena host``)."""

from arena_sdk.grpc_tuning import import_grpc

import_grpc()  # the host serves bots: gRPC loaded with the experiments the referee turns off (arena_sdk.grpc_tuning)
