"""Layer 5: the public protocol (``proto/arena/v1``, its generated code in the SDK's ``arena_sdk.pb``) served over
gRPC, and conversions to engine types."""

from arena_sdk.grpc_tuning import import_grpc

import_grpc()  # before any module of this layer loads gRPC: with the experiments it turns off (arena_sdk.grpc_tuning)
