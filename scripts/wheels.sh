#!/usr/bin/env bash
# Builds the pswap Python package's wheels, each carrying the pswap binary
# cross-compiled for its platform (CGO_ENABLED=0: nothing in pswap needs
# cgo; SQLite is modernc's pure Go), as ruff's and uv's wheels carry theirs.
#
#   scripts/wheels.sh [OUT [PLATFORM...]]
#
# OUT defaults to dist/; PLATFORM is one of linux-amd64 linux-arm64
# darwin-arm64 darwin-amd64 windows-amd64 (default: all five). The wheel
# version is the binary's (swap.WriterVersion). Each wheel is checked: one
# binary (pswap.exe on Windows) of the platform's format, and its tag.
# Prints the wheels' paths.
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

# check_wheel WHEEL GOOS TAG: the wheel holds one binary, pswap.exe on
# Windows and pswap elsewhere, of the platform's executable format (PE,
# ELF, Mach-O), and its WHEEL file names the platform tag.
check_wheel() {
	"$PYTHON" - "$@" <<'EOF'
import sys, zipfile
wheel, goos, tag = sys.argv[1:4]
z = zipfile.ZipFile(wheel)
exe = "pswap.exe" if goos == "windows" else "pswap"
bins = [n for n in z.namelist() if ".data/scripts/" in n]
if [b.rsplit("/", 1)[1] for b in bins] != [exe]:
    sys.exit(f"wheels.sh: {wheel} carries {bins}, want one {exe}")
head = z.open(bins[0]).read(4)
magic = {"windows": (b"MZ",), "linux": (b"\x7fELF",), "darwin": (b"\xcf\xfa\xed\xfe",)}[goos]
if not head.startswith(magic):
    sys.exit(f"wheels.sh: {bins[0]} in {wheel} is not a {goos} executable ({head!r})")
wheel_file = next(n for n in z.namelist() if n.endswith(".dist-info/WHEEL"))
if f"Tag: py3-none-{tag}" not in z.read(wheel_file).decode():
    sys.exit(f"wheels.sh: {wheel} is not tagged py3-none-{tag}")
EOF
}

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for p in "${platforms[@]}"; do
	t="$(tag "$p")"
	goos="${p%-*}" goarch="${p#*-}"
	exe="$tmp/$p/pswap"
	[[ "$goos" == windows ]] && exe="$exe.exe"
	CGO_ENABLED=0 GOOS="$goos" GOARCH="$goarch" go build -trimpath -ldflags='-s -w' -o "$exe" ./cmd/pswap
	whl="$("$PYTHON" python/build_wheel.py --binary "$exe" --platform "$t" --version "$version" --out "$out")"
	check_wheel "$whl" "$goos" "${t%%.*}"
	echo "$whl"
done
