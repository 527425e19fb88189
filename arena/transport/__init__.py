"""Layer 5: the public protocol (``proto/arena/v1``, its generated code in the SDK's ``arena_sdk.pb``) served over
gRPC, and conversions to engine types."""
