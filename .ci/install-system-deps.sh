#!/usr/bin/env bash
# System packages that CI (and a developer machine running the full test suite) needs.
# Idempotent: when every package is already installed, apt is not touched at all.
# Runs as root, or through sudo when not root and sudo is available. Debian/Ubuntu (apt) only.
#
# To add a package: append one line to PACKAGES with the reason next to it, and, if the package
# needs something done after installing it, a case in after_install below.
set -euo pipefail

PACKAGES=(
  openssh-server # tools/testbed: one sshd per test host on 127.0.0.N (the system sshd is kept off)
  g++            # packages/shm, packages/sockopt: node-gyp compiles their addons from source at install
  make           # packages/shm, packages/sockopt: node-gyp
  python3        # packages/shm, packages/sockopt: node-gyp
  slurm-wlm      # tools/slurm-cluster, plugins/boot-slurm: a private one-node Slurm cluster for real batch-job tests
  munge          # tools/slurm-cluster: Slurm's authentication (the fixture runs its own munged on a private socket)
  openmpi-bin    # tools/bench pingpong: the Open MPI column (Open MPI's mpirun, TCP BTL over loopback)
  libopenmpi-dev # tools/bench pingpong: mpicc and mpi.h, to compile c/pingpong.c at run time (gcc comes with g++)
  criu           # plugins/cr-external: the criu back end's tests run where `criu check` passes (they say NOT RUN where it fails)
  iproute2       # plugins/cr-external tests: the test checkpointer reads (ss -tnpi) and, emulating a dump, destroys (ss -K) a frozen rank's TCP connections
)

log() { printf 'install-system-deps: %s\n' "$*"; }

installed() {
  dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null | grep -qx installed
}

# Called once per package this run installed (not for packages that were already there).
after_install() {
  case "$1" in
    openssh-server)
      # The testbed starts its own sshds on 127.0.0.N:22; a system sshd on 0.0.0.0:22 would
      # take that port from them. Keep the system one off: Debian's unit and init script honour
      # sshd_not_to_be_run, and where systemd runs, also disable the service and socket units.
      $SUDO touch /etc/ssh/sshd_not_to_be_run
      if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
        $SUDO systemctl disable --now ssh.socket ssh.service >/dev/null 2>&1 || true
      elif [ -x /etc/init.d/ssh ]; then
        $SUDO /etc/init.d/ssh stop >/dev/null 2>&1 || true
      fi
      ;;
  esac
}

if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg-query >/dev/null 2>&1; then
  log "this script installs with apt-get; install by hand instead: ${PACKAGES[*]}" >&2
  exit 1
fi

missing=()
for p in "${PACKAGES[@]}"; do
  installed "$p" || missing+=("$p")
done

if [ "${#missing[@]}" -eq 0 ]; then
  log "already installed: ${PACKAGES[*]}"
else
  if [ "$(id -u)" -eq 0 ]; then
    SUDO=''
  elif command -v sudo >/dev/null 2>&1; then
    SUDO='sudo'
  else
    log "missing ${missing[*]}, and this is neither root nor has sudo; run this script as root" >&2
    exit 1
  fi
  # Packages about to be installed that start services must not start them (see after_install).
  for p in "${missing[@]}"; do
    case "$p" in
      openssh-server) $SUDO mkdir -p /etc/ssh && $SUDO touch /etc/ssh/sshd_not_to_be_run ;;
    esac
  done
  log "installing: ${missing[*]}"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    -o DPkg::Lock::Timeout=300 "${missing[@]}"
  for p in "${missing[@]}"; do
    after_install "$p"
  done
fi

# The testbed needs port 22 on 127.0.0.N free: warn when something listens on all addresses.
if command -v ss >/dev/null 2>&1 && ss -Hltn 'sport = :22' 2>/dev/null | grep -Eq '(0\.0\.0\.0|\*|\[::\]):22\b'; then
  log "warning: something listens on *:22 (a system sshd?); the testbed cannot use port 22." >&2
  log "         stop it, or run the tests with SSI_TESTBED_PORT=2222." >&2
fi
