#!/usr/bin/env bash
# Builds the pswap Python package's wheels, each carrying the pswap binary
# cross-compiled for its platform (CGO_ENABLED=0: nothing in pswap needs
# cgo; SQLite is modernc's pure Go), as ruff's and uv's wheels carry theirs.
#
#   scripts/wheels.sh [OUT [PLATFORM...]]
#
# OUT defaults to dist/; PLATFORM is one of linux-amd64 linux-arm64
# darwin-arm64 darwin-amd64 windows-amd64 (default: all five). The wheel
# version is the binary's (swap.WriterVersion). Prints the wheels' paths.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

out="${1:-dist}"
shift || true
platforms=("$@")
[[ ${#platforms[@]} -gt 0 ]] || platforms=(linux-amd64 linux-arm64 darwin-arm64 darwin-amd64 windows-amd64)
PYTHON="${PYTHON:-python3}"

version="$(sed -n 's/^const WriterVersion = "\(.*\)"$/\1/p' swap/swap.go)"
[[ -n "$version" ]] || { echo "wheels.sh: no WriterVersion in swap/swap.go" >&2; exit 1; }

# Wheel platform tags: a static Go binary runs on any glibc or musl Linux;
# Go 1.26 needs macOS 12 or newer.
tag() {
	case "$1" in
	linux-amd64) echo manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_2_x86_64 ;;
	linux-arm64) echo manylinux_2_17_aarch64.manylinux2014_aarch64.musllinux_1_2_aarch64 ;;
	darwin-arm64) echo macosx_12_0_arm64 ;;
	darwin-amd64) echo macosx_12_0_x86_64 ;;
	windows-amd64) echo win_amd64 ;;
	*) echo "wheels.sh: unknown platform $1" >&2; exit 2 ;;
	esac
}

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for p in "${platforms[@]}"; do
	t="$(tag "$p")"
	goos="${p%-*}" goarch="${p#*-}"
	exe="$tmp/$p/pswap"
	[[ "$goos" == windows ]] && exe="$exe.exe"
	CGO_ENABLED=0 GOOS="$goos" GOARCH="$goarch" go build -trimpath -ldflags='-s -w' -o "$exe" ./cmd/pswap
	"$PYTHON" python/build_wheel.py --binary "$exe" --platform "$t" --version "$version" --out "$out"
done
