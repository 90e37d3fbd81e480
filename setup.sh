#!/usr/bin/env bash
# Sets fbkit up on a fresh Debian 12 machine and builds it into build/.
# Idempotent: installs only the missing Debian packages, fetches the tree-sitter-python
# grammar (npm package, pinned by checksum) once into .deps/, then configures and builds.
# Environment: FBKIT_BUILD_DIR (default build), FBKIT_CMAKE_ARGS (extra cmake arguments,
# e.g. "-DFBKIT_SANITIZE=ON", or "-DCMAKE_BUILD_TYPE=RelWithDebInfo" for debug information,
# which makes the build a third slower), FBKIT_AGENTS (agent CLIs for `fb-extract infer
# --agent`, installed with npm at pinned versions into .deps/agents/: "1" or "all" for every
# one, or names separated by commas: claude-code, codex, gemini-cli, mini-swe-agent,
# trae-agent, auto-code-rover; none by default, they are 100-700 MB each).
set -euo pipefail
cd "$(dirname "$0")"

readonly GRAMMAR_VERSION=0.23.6
readonly GRAMMAR_SHA256=aab5b860d93dbf84b37fed532f7dacc0468ede5387d0c74911d68f964287662a
readonly BUILD_DIR=${FBKIT_BUILD_DIR:-build}
packages=(cmake ninja-build g++ pkg-config git libtree-sitter-dev libboost-graph-dev
  libcli11-dev nlohmann-json3-dev libtomlplusplus-dev bubblewrap libgtest-dev libssl-dev libcurl4-openssl-dev libutf8proc-dev python3 python3-dev python3-venv
  python3-pytest python3-pytest-xdist python3-coverage python3-pyflakes python3-hypothesis chromium
  podman buildah runc mmdebstrap uidmap)
command -v npm >/dev/null 2>&1 || packages+=(npm)

install_packages() {
  local missing=() p
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "setup: installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# podman on hosts without systemd and with cgroups v1 "hybrid" (docs/containers.md): runc
# (crun refuses hybrid cgroups), cgroupfs, a file event log, rlimits the session may set.
# Only when the machine has no containers.conf of its own.
configure_podman() {
  local conf=/etc/containers/containers.conf
  [ -e "$conf" ] && return 0
  [ "$(id -u)" -eq 0 ] || { echo "setup: $conf missing; podman may need docs/containers.md's settings"; return 0; }
  mkdir -p /etc/containers
  printf '%s\n' '# written by fbkit setup.sh (docs/containers.md)' '[containers]' \
    'default_ulimits = ["nproc=32768:32768", "nofile=16384:16384"]' '' '[engine]' \
    'runtime = "runc"' 'cgroup_manager = "cgroupfs"' 'events_logger = "file"' > "$conf"
}

fetch_grammar() {
  local dest=.deps/tree-sitter-python-$GRAMMAR_VERSION
  [ -f "$dest/src/parser.c" ] && return 0
  echo "setup: fetching tree-sitter-python@$GRAMMAR_VERSION from npm"
  local tmp
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent "tree-sitter-python@$GRAMMAR_VERSION" >/dev/null)
  echo "$GRAMMAR_SHA256  $tmp/tree-sitter-python-$GRAMMAR_VERSION.tgz" | sha256sum -c --quiet
  mkdir -p "$dest"
  tar -xzf "$tmp/tree-sitter-python-$GRAMMAR_VERSION.tgz" -C "$dest" --strip-components=1 \
    package/src package/LICENSE package/package.json
  rm -rf "$tmp"
}

# name=npm package@version (pip: a virtual environment's pinned requirements), the versions
# fb-extract's presets were tested with. mini-swe-agent's litellm needs mcp once tools are
# offered; litellm is pinned to the release whose dependencies this index has.
# src: a git repository at a pinned commit, installed with its own lock file's versions
# (uv.lock) as pip constraints, by Python >= 3.12 (FBKIT_PYTHON, else python3.13 or python3.12
# on PATH); FBKIT_AGENT_SRC_<name with _> names a local checkout of that commit instead (a
# machine that cannot reach GitHub).
readonly AGENTS=(claude-code=@anthropic-ai/claude-code@2.1.330 codex=@openai/codex@0.169.0
  gemini-cli=@google/gemini-cli@0.61.0
  "mini-swe-agent=pip:mini-swe-agent==2.4.6 litellm==1.106.2 mcp==2.3.0"
  "trae-agent=src:https://github.com/bytedance/trae-agent@e839e559ac61bdd0e057c375dd1dee391fee797d docker pexpect unidiff"
  "auto-code-rover=app:https://github.com/nus-apr/auto-code-rover@3536ac292e3062ffb3f6e98457958e2b803228d6 loguru==0.7.2 tenacity==8.2.3 openai==1.109.1 litellm==1.53.9 natsort==8.4.0 unidiff==0.7.5 pylint==3.2.3 astroid==3.2.3 coverage==7.5.3 rich==13.7.1 requests==2.34.2 timeout-decorator==0.5.0 ollama==0.3.3 emojis==0.7.0 docker==7.0.0")

# A Python >= 3.12 for agents that need one, or nothing.
modern_python() {
  local p
  for p in ${FBKIT_PYTHON:-} python3.13 python3.12; do
    if "$p" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
      echo "$p"
      return 0
    fi
  done
}

# The checkout of a src:/app: entry ($2: "URL@COMMIT ...") for agent $1 in $3/src (or the
# local one FBKIT_AGENT_SRC_<name> names), with a Python >= 3.12 venv in $3/venv.
checkout_source() {
  local name=$1 spec=${2#*:} dest=$3 url commit src python var
  url=${spec%% *} commit=${url##*@} url=${url%@*}
  python=$(modern_python)
  if [ -z "$python" ]; then
    echo "setup: $name needs Python >= 3.12 (Debian 12 has 3.11): install one (python3.12 on PATH, or FBKIT_PYTHON=/path/to/python3.12)" >&2
    exit 2
  fi
  var=FBKIT_AGENT_SRC_${name//-/_}
  src=${!var:-}
  if [ -z "$src" ]; then
    src=$dest/src
    git clone --quiet "$url" "$src" && git -C "$src" checkout --quiet "$commit" || {
      echo "setup: cannot fetch $url at $commit; clone it elsewhere and set $var=DIR" >&2
      exit 2
    }
  elif [ ! -d "$src" ]; then
    echo "setup: $var=$src is no directory" >&2
    exit 2
  fi
  "$python" -m venv "$dest/venv"
  SOURCE=$src
}

# An app: entry: a program run from its checkout (AutoCodeRover's app/main.py), copied into
# the venv (so the agent's sandbox, which shows the venv, sees it), its requirements pinned
# in the entry, started by venv/bin/<name>.
install_app() {
  local name=$1 spec=${2#app:} dest=$3
  checkout_source "$name" "$2" "$dest"
  mkdir -p "$dest/venv/app-src"
  cp -r "$SOURCE/app" "$dest/venv/app-src/"
  # shellcheck disable=SC2086
  "$dest/venv/bin/pip" install --quiet --disable-pip-version-check ${spec#* }
  cat >"$dest/venv/bin/$name" <<'SH'
#!/bin/sh
# Written by setup.sh: runs the agent's app/main.py from its copy in this venv.
here=$(dirname "$(readlink -f "$0")")
PYTHONPATH="$here/../app-src" exec "$here/python" "$here/../app-src/app/main.py" "$@"
SH
  chmod +x "$dest/venv/bin/$name"
}

# Installs a src: entry ($2: "URL@COMMIT EXTRA..." ) for agent $1 into $3.
install_from_source() {
  local name=$1 spec=${2#src:} dest=$3 src
  checkout_source "$name" "$2" "$dest"
  src=$SOURCE
  /usr/bin/python3 - "$src/uv.lock" >"$dest/constraints.txt" <<'PY'
import sys, tomllib
with open(sys.argv[1], "rb") as f:
    lock = tomllib.load(f)
root = {p["name"] for p in lock["package"] if p.get("source", {}).get("editable") or p.get("source", {}).get("virtual")}
for p in sorted(lock["package"], key=lambda p: p["name"]):
    if p["name"] not in root and "version" in p:
        print(f"{p['name']}=={p['version']}")
PY
  # shellcheck disable=SC2086
  "$dest/venv/bin/pip" install --quiet --disable-pip-version-check -c "$dest/constraints.txt" \
    "$src" ${spec#* }
}

install_agents() {
  local wanted=${FBKIT_AGENTS:-} entry name package dest
  [ -z "$wanted" ] && return 0
  for entry in "${AGENTS[@]}"; do
    name=${entry%%=*} package=${entry#*=}
    case ",$wanted," in
      ,1,|,all,|*,"$name",*) ;;
      *) continue ;;
    esac
    dest=.deps/agents/$name
    [ "$(cat "$dest/.fbkit-package" 2>/dev/null)" = "$package" ] && continue
    echo "setup: installing the agent $name ($package) into $dest"
    rm -rf "$dest"
    mkdir -p "$dest"
    if [[ $package == src:* ]]; then
      install_from_source "$name" "$package" "$dest"
    elif [[ $package == app:* ]]; then
      install_app "$name" "$package" "$dest"
    elif [[ $package == pip:* ]]; then
      /usr/bin/python3 -m venv "$dest/venv"
      # shellcheck disable=SC2086
      "$dest/venv/bin/pip" install --quiet --disable-pip-version-check ${package#pip:}
    else
      npm install --prefix "$dest" --no-audit --no-fund --loglevel=error "$package" >/dev/null
    fi
    echo "$package" >"$dest/.fbkit-package"
  done
}

# The Kubernetes schema check of deploy/k8s/ (ctest k8s_manifests), offline once installed.
readonly K8S_VALIDATE="kubernetes-validate==1.37.0 jsonschema==4.26.0 PyYAML==6.0.4 referencing==0.37.0"

install_tools() {
  local dest=.deps/tools/kubernetes-validate
  [ "$(cat "$dest/.fbkit-package" 2>/dev/null)" = "$K8S_VALIDATE" ] && return 0
  echo "setup: installing $K8S_VALIDATE into $dest"
  rm -rf "$dest"
  /usr/bin/python3 -m venv "$dest/venv"
  # shellcheck disable=SC2086
  "$dest/venv/bin/pip" install --quiet --disable-pip-version-check $K8S_VALIDATE
  echo "$K8S_VALIDATE" >"$dest/.fbkit-package"
}

check_agent_names() {
  local name entry names=" 1 all "
  for entry in "${AGENTS[@]}"; do names+="${entry%%=*} "; done
  local wanted=${FBKIT_AGENTS:-}
  for name in ${wanted//,/ }; do
    case "$names" in
      *" $name "*) ;;
      *) echo "setup: FBKIT_AGENTS: unknown agent '$name' (claude-code, codex, gemini-cli, mini-swe-agent, trae-agent, auto-code-rover, all)" >&2
        exit 2 ;;
    esac
  done
}

check_agent_names
install_packages
configure_podman
fetch_grammar
install_tools
install_agents
# shellcheck disable=SC2086
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFBKIT_WERROR=ON \
  ${FBKIT_CMAKE_ARGS:-}
cmake --build "$BUILD_DIR" -j "$(nproc)"
echo "setup: built into $BUILD_DIR/ (binaries in $BUILD_DIR/cli/)"
