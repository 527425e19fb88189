#!/bin/sh
# Makes sure the C++ bot's build tools and libraries are present: cmake, g++, pkg-config, protoc, grpc_cpp_plugin,
# and the gRPC C++ and protobuf development files. On Debian/Ubuntu, missing packages are installed with apt-get
# (as root); anywhere else, or without root, it says what is missing and fails.
set -eu

DEBS="cmake g++ make pkg-config protobuf-compiler protobuf-compiler-grpc libprotobuf-dev libgrpc++-dev"

have_all() {
  for tool in cmake g++ make pkg-config protoc grpc_cpp_plugin; do
    command -v "$tool" >/dev/null 2>&1 || return 1
  done
  pkg-config --exists grpc++ protobuf
}

have_all && exit 0

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
  echo "C++ bot: missing build tools; install cmake, g++, pkg-config, protoc, grpc_cpp_plugin and the gRPC C++" \
    "and protobuf development files (Debian: $DEBS)" >&2
  exit 1
fi

missing=""
for deb in $DEBS; do
  dpkg-query -W -f='${Status}' "$deb" 2>/dev/null | grep -q "install ok installed" || missing="$missing $deb"
done
if [ -z "$missing" ]; then
  echo "C++ bot: the Debian packages are installed but a tool or pkg-config file is missing; check PATH" >&2
  exit 1
fi
if [ "$(id -u)" != 0 ]; then
  echo "C++ bot: missing Debian packages:$missing. Install them as root: apt-get install -y$missing" >&2
  exit 1
fi
echo "C++ bot: installing Debian packages:$missing"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
have_all
