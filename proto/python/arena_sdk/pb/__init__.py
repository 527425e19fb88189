"""Generated from proto/arena/v1 by arena.transport.build_proto; do not edit."""
