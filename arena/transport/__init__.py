"""Layer 5: the public protocol (``proto/arena/v1``) as generated Python code, and conversions to engine types."""
