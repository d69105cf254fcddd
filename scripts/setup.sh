#!/usr/bin/env bash
# Prepares a machine (Debian 12, GPU or not) to build, lint and check this workspace:
#   (a) the pinned nightly from rust-toolchain.toml (rustc's nvptx64 backend needs it),
#   (b) a libcuda.so to link against (cust's build links -lcuda even with no GPU),
#   (c) ptxas (PyPI nvidia-cuda-nvcc-cu12), which `cargo xtask ptxas` runs on the PTX.
# Idempotent: it checks before it changes anything, and says what it did.
# Works as root, or as a user with sudo (only apt steps need it).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

DID=()
did() { DID+=("$*"); echo "setup: $*"; }
say() { echo "setup: $*"; }

if [ "$(id -u)" -eq 0 ]; then
    SUDO=()
elif command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
else
    SUDO=()
fi
as_root() {
    if [ "$(id -u)" -ne 0 ] && [ ${#SUDO[@]} -eq 0 ]; then
        echo "setup: need root for: $*  (run as root or install sudo)" >&2
        exit 1
    fi
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive "$@"
}
APT_UPDATED=0
apt_install() {
    if [ "$APT_UPDATED" -eq 0 ]; then
        as_root apt-get update -qq
        APT_UPDATED=1
    fi
    as_root apt-get install -y -qq --no-install-recommends "$@"
    did "apt-get install $*"
}

# --- (0) basics a fresh box may lack: a C linker for host crates, curl for rustup -------
missing=()
command -v cc >/dev/null 2>&1 || missing+=(gcc libc6-dev)
command -v curl >/dev/null 2>&1 || missing+=(curl ca-certificates)
command -v python3 >/dev/null 2>&1 || missing+=(python3 python3-pip)
if [ ${#missing[@]} -gt 0 ]; then
    apt_install "${missing[@]}"
fi

# --- (a) Rust toolchain ------------------------------------------------------------------
if ! command -v rustup >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/rustup" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi
if ! command -v rustup >/dev/null 2>&1; then
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs |
        sh -s -- -y --profile minimal --default-toolchain none --no-modify-path
    export PATH="$HOME/.cargo/bin:$PATH"
    did "installed rustup (https://sh.rustup.rs) into $HOME/.cargo"
fi
CHANNEL="$(sed -n 's/^channel *= *"\(.*\)"/\1/p' rust-toolchain.toml)"
COMPONENTS=(rust-src llvm-tools rustfmt clippy)
toolchain_ready() {
    rustup toolchain list 2>/dev/null | grep -q "^$CHANNEL" || return 1
    local installed
    installed="$(rustup component list --installed --toolchain "$CHANNEL" 2>/dev/null)" || return 1
    for c in "${COMPONENTS[@]}"; do
        grep -q "^$c" <<<"$installed" || return 1
    done
}
if toolchain_ready; then
    say "toolchain $CHANNEL with ${COMPONENTS[*]}: present"
else
    # With no argument, rustup (>= 1.28) installs what rust-toolchain.toml asks for.
    rustup toolchain install || rustup toolchain install "$CHANNEL" --profile minimal \
        $(printf -- '--component %s ' "${COMPONENTS[@]}")
    toolchain_ready || { echo "setup: toolchain $CHANNEL still incomplete" >&2; exit 1; }
    did "rustup toolchain install $CHANNEL (${COMPONENTS[*]})"
fi
rustup show active-toolchain

# --- (b) libcuda.so for linking ------------------------------------------------------------
LINK_DIR="$ROOT/tools/cuda-link/lib64" # CUDA_LIBRARY_PATH/lib64, see .cargo/config.toml
have_libcuda() {
    ldconfig -p 2>/dev/null | grep -q 'libcuda.so ' ||
        [ -e /usr/lib/x86_64-linux-gnu/libcuda.so ] ||
        [ -e "$LINK_DIR/libcuda.so" ]
}
if have_libcuda; then
    say "libcuda.so: present"
else
    if ! dpkg -s libcuda1 >/dev/null 2>&1; then
        # libcuda1 lives in Debian's non-free component.
        if [ -f /etc/apt/sources.list.d/debian.sources ] &&
            grep -q '^Components: main$' /etc/apt/sources.list.d/debian.sources; then
            as_root sed -i 's/^Components: main$/Components: main contrib non-free non-free-firmware/' \
                /etc/apt/sources.list.d/debian.sources
            did "enabled contrib non-free non-free-firmware in /etc/apt/sources.list.d/debian.sources"
        elif [ -f /etc/apt/sources.list ] && grep -Eq '^deb .* main$' /etc/apt/sources.list; then
            as_root sed -i -E 's/^(deb .* main)$/\1 contrib non-free non-free-firmware/' /etc/apt/sources.list
            did "enabled contrib non-free non-free-firmware in /etc/apt/sources.list"
        fi
        APT_UPDATED=0
        apt_install libcuda1
    fi
    if ! have_libcuda; then
        # Only the versioned library is there: give the linker a libcuda.so next to the
        # README in tools/cuda-link/lib64 (ignored by git, see .gitignore).
        so1="$(dpkg -L libcuda1 | grep -E '/libcuda\.so(\.1)?$' | head -n1 || true)"
        [ -n "$so1" ] || so1="$(ldconfig -p | sed -n 's/.*libcuda\.so\.1 .*=> //p' | head -n1)"
        [ -n "$so1" ] || { echo "setup: libcuda1 installed but no libcuda.so(.1) found" >&2; exit 1; }
        mkdir -p "$LINK_DIR"
        ln -sf "$so1" "$LINK_DIR/libcuda.so"
        did "linked $LINK_DIR/libcuda.so -> $so1"
    fi
    have_libcuda || { echo "setup: still no libcuda.so" >&2; exit 1; }
fi

# --- (c) ptxas -----------------------------------------------------------------------------
# Same search order as `cargo xtask ptxas` (xtask/src/ptxas.rs).
find_ptxas() {
    if [ -n "${PTXAS:-}" ]; then command -v "$PTXAS" && return 0; fi
    command -v ptxas && return 0
    local dir
    dir="$(python3 -c 'import nvidia.cuda_nvcc as m; print(list(m.__path__)[0])' 2>/dev/null)" || return 1
    [ -x "$dir/bin/ptxas" ] && echo "$dir/bin/ptxas"
}
if p="$(find_ptxas)"; then
    say "ptxas: $p"
else
    python3 -m pip --version >/dev/null 2>&1 || apt_install python3-pip
    # A Debian system python refuses plain pip installs (PEP 668); fall back to --user.
    python3 -m pip install -q nvidia-cuda-nvcc-cu12 ||
        python3 -m pip install -q --user --break-system-packages nvidia-cuda-nvcc-cu12
    p="$(find_ptxas)" || { echo "setup: nvidia-cuda-nvcc-cu12 installed but ptxas not found" >&2; exit 1; }
    did "pip install nvidia-cuda-nvcc-cu12 (ptxas: $p)"
fi
"$p" --version | sed -n "/release/p"

if [ ${#DID[@]} -eq 0 ]; then
    say "done: nothing to do, everything was already in place"
else
    say "done; changed:"
    printf '  - %s\n' "${DID[@]}"
fi
