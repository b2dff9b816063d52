#!/usr/bin/env bash
# One command from a fresh machine with Node 20 to a built workspace and a first demo run.
set -euo pipefail
cd "$(dirname "$0")"

step() { printf '\n==> %s\n' "$*"; }

node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$node_major" -lt 20 ]; then
  echo "setup: Node.js 20 or newer is required (found: $(node --version 2>/dev/null || echo none))." >&2
  exit 1
fi

pnpm_version=$(node -p 'require("./package.json").packageManager.split("@")[1]')
if ! command -v pnpm >/dev/null 2>&1 || [ "$(pnpm --version)" != "$pnpm_version" ]; then
  step "installing pnpm $pnpm_version"
  npm install -g "pnpm@$pnpm_version"
fi

step "installing system packages (openssh-server for the test hosts, a C++ toolchain for @ssi/shm)"
bash .ci/install-system-deps.sh

step "installing dependencies"
pnpm install --frozen-lockfile

step "building every package"
pnpm build

step "demo"
pnpm --silent demo
