#!/usr/bin/env bash
# Installs what `make run` (mode: run) or `make test` (mode: test) needs and is
# missing. System packages are installed when running as root; otherwise the
# exact command for this distribution is printed and the script stops.
set -euo pipefail
mode=${1:-run}

run_pkgs_deb="build-essential pkg-config git libgtk-3-dev libwebkit2gtk-4.1-dev"
test_pkgs_deb="xvfb xauth x11-apps imagemagick xdotool dbus chromium patch fonts-wqy-microhei sqlite3 strace iproute2"
run_pkgs_dnf="gcc pkgconf-pkg-config git gtk3-devel webkit2gtk4.1-devel"
test_pkgs_dnf="xorg-x11-server-Xvfb xdotool ImageMagick dbus-daemon chromium patch"
run_pkgs_pac="base-devel pkgconf git gtk3 webkit2gtk-4.1"
test_pkgs_pac="xorg-server-xvfb xdotool imagemagick dbus chromium patch"

# Agent CLIs the runtime adapters are tested against, pinned exactly
# (agent-clis.md): an unpinned install on Node 20 silently picks another one.
claude_code_version=2.1.330
codex_version=0.169.0
gemini_cli_version=0.61.0
root=$(cd "$(dirname "$0")/.." && pwd)
agent_clis="$root/.cache/agent-clis"

distro() {
  if [ "$(uname -s)" = Darwin ]; then echo darwin; return; fi
  local ids=""
  [ -r /etc/os-release ] && ids=$(. /etc/os-release; echo "${ID:-} ${ID_LIKE:-}")
  case " $ids " in
    *" debian "*|*" ubuntu "*) echo debian ;;
    *" fedora "*|*" rhel "*|*" centos "*) echo fedora ;;
    *" arch "*) echo arch ;;
    *) echo unknown ;;
  esac
}

need_go() {
  command -v go >/dev/null 2>&1 || { echo "Go 1.26 or newer is required: https://go.dev/dl/ (or your package manager)" >&2; exit 1; }
  command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || {
    echo "Node.js 20.19+ and npm are required (for example: apt-get install nodejs npm, or nvm)" >&2; exit 1; }
}

install_debian() {
  local pkgs="$run_pkgs_deb"; [ "$mode" = test ] && pkgs="$pkgs $test_pkgs_deb"
  local missing=""
  for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
  done
  [ -z "$missing" ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "Missing system packages:$missing" >&2
    echo "Install them with:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends$missing" >&2
    exit 1
  fi
  echo "Installing system packages:$missing"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
}

print_cmd() {
  local cmd=$1 pkgs=$2
  echo "This script installs system packages automatically only on Debian/Ubuntu as root." >&2
  echo "Install what AgentHub needs with:" >&2
  echo "  $cmd $pkgs" >&2
  echo "then run the make target again with SKIP_SYSTEM_DEPS=1." >&2
  exit 1
}

if [ "${SKIP_SYSTEM_DEPS:-}" != 1 ]; then
  case "$(distro)" in
    debian) install_debian ;;
    fedora) p="$run_pkgs_dnf"; [ "$mode" = test ] && p="$p $test_pkgs_dnf"; print_cmd "sudo dnf install -y" "$p" ;;
    arch) p="$run_pkgs_pac"; [ "$mode" = test ] && p="$p $test_pkgs_pac"; print_cmd "sudo pacman -S --needed" "$p" ;;
    darwin) print_cmd "brew install" "go node git (Xcode command line tools provide the WebKit framework)" ;;
    *) echo "Unknown distribution: install GTK 3 and WebKitGTK 4.1 development packages, git and a C compiler, then run with SKIP_SYSTEM_DEPS=1" >&2; exit 1 ;;
  esac
fi
need_go

# install_agent_clis puts the pinned Claude Code CLI under .cache/agent-clis
# (the Makefile points AGENTHUB_CLAUDE_BIN at it). Idempotent: nothing is
# fetched when the pinned version is already there.
install_agent_clis() {
  local pkg="$agent_clis/node_modules/@anthropic-ai/claude-code/package.json"
  local bin="$agent_clis/node_modules/.bin/claude"
  if [ -x "$bin" ] && grep -q "\"version\": \"$claude_code_version\"" "$pkg" 2>/dev/null; then
    return 0
  fi
  echo "Installing Claude Code $claude_code_version for the runtime tests (about 365 MB)"
  mkdir -p "$agent_clis"
  npm install --prefix "$agent_clis" --no-audit --no-fund --loglevel=error \
    "@anthropic-ai/claude-code@$claude_code_version"
  "$bin" --version >/dev/null || { echo "the installed Claude Code CLI does not run" >&2; exit 1; }
}

# install_codex puts the pinned Codex CLI under .cache/agent-clis/codex, a
# prefix of its own (its own lock; the Makefile points AGENTHUB_CODEX_BIN at
# it). The npm package is a Node script; the native binary comes in a
# platform package (@openai/codex-linux-x64 here) that npm installs as an
# optional dependency, so its presence is checked. About 404 MB, 15 s.
install_codex() {
  local prefix="$agent_clis/codex"
  local pkg="$prefix/node_modules/@openai/codex/package.json"
  local bin="$prefix/node_modules/.bin/codex"
  local native
  native=$(ls "$prefix"/node_modules/@openai/codex-*/vendor/*/bin/codex 2>/dev/null | head -n 1 || true)
  if [ -x "$bin" ] && [ -n "$native" ] && grep -q "\"version\": \"$codex_version\"" "$pkg" 2>/dev/null; then
    return 0
  fi
  echo "Installing Codex CLI $codex_version for the runtime tests (about 404 MB)"
  mkdir -p "$prefix"
  npm install --prefix "$prefix" --save-exact --include=optional --no-audit --no-fund --loglevel=error \
    "@openai/codex@$codex_version"
  native=$(ls "$prefix"/node_modules/@openai/codex-*/vendor/*/bin/codex 2>/dev/null | head -n 1 || true)
  [ -n "$native" ] || { echo "npm installed @openai/codex without its native binary (the platform optional dependency)" >&2; exit 1; }
  "$bin" --version | grep -q "$codex_version" || { echo "the installed Codex CLI does not run" >&2; exit 1; }
}

# install_gemini puts the pinned Gemini CLI under .cache/agent-clis/gemini, a
# prefix of its own (the Makefile points AGENTHUB_GEMINI_BIN at it). It is a
# JavaScript bundle run by node; about 100 MB, 20 s.
install_gemini() {
  local prefix="$agent_clis/gemini"
  local pkg="$prefix/node_modules/@google/gemini-cli/package.json"
  local bin="$prefix/node_modules/.bin/gemini"
  if [ -x "$bin" ] && grep -q "\"version\": \"$gemini_cli_version\"" "$pkg" 2>/dev/null; then
    return 0
  fi
  echo "Installing Gemini CLI $gemini_cli_version for the runtime tests (about 100 MB)"
  mkdir -p "$prefix"
  npm install --prefix "$prefix" --save-exact --no-audit --no-fund --loglevel=error \
    "@google/gemini-cli@$gemini_cli_version"
  HOME="$prefix" GEMINI_CLI_NO_RELAUNCH=true "$bin" --version | grep -q "$gemini_cli_version" ||
    { echo "the installed Gemini CLI does not run" >&2; exit 1; }
}

# install_acp_client puts the official ACP client that tests/protocols/acp
# drives `agenthub acp` with into that folder's node_modules, exactly as its
# committed lock pins it (npm ci). Idempotent; about 3 MB.
install_acp_client() {
  local dir="$root/tests/protocols/acp"
  local want
  want=$(sed -n 's/.*"@agentclientprotocol\/sdk": "\(.*\)".*/\1/p' "$dir/package.json")
  if grep -q "\"version\": \"$want\"" "$dir/node_modules/@agentclientprotocol/sdk/package.json" 2>/dev/null; then
    return 0
  fi
  echo "Installing the ACP client $want for tests/protocols/acp"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
}

# install_protocol_clients puts the official AG-UI client and the AI SDK that
# tests/protocols/agui drives `agenthub serve` with into that folder's
# node_modules, exactly as its committed lock pins them (npm ci).
# Idempotent; about 55 MB.
install_protocol_clients() {
  local dir="$root/tests/protocols/agui"
  local want
  want=$(sed -n 's/.*"ai": "\(.*\)".*/\1/p' "$dir/package.json")
  if grep -q "\"version\": \"$want\"" "$dir/node_modules/ai/package.json" 2>/dev/null &&
    [ -f "$dir/node_modules/@ag-ui/client/package.json" ]; then
    return 0
  fi
  echo "Installing the AG-UI client and the AI SDK $want for tests/protocols/agui"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
}

if [ "$mode" = test ]; then
  install_agent_clis
  install_codex
  install_gemini
  install_acp_client
  install_protocol_clients
fi

# A Secret Service for the keychain test (backend/keychain): gnome-keyring
# runs headless inside a private dbus-run-session, and secret-tool is the
# next step the keychain error names. Debian as root only, like the rest.
install_keyring_test_deps() {
  [ "$(distro)" = debian ] && [ "$(id -u)" -eq 0 ] || return 0
  local missing=""
  for p in gnome-keyring libsecret-tools dbus; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
  done
  [ -z "$missing" ] && return 0
  echo "Installing system packages for the keychain test:$missing"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
}

if [ "$mode" = test ] && [ "${SKIP_SYSTEM_DEPS:-}" != 1 ]; then
  install_keyring_test_deps
fi
