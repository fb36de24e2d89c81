# Sourced by the set-up scripts: make .venv and install the project into it (idempotent).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
EXTRAS=${EXTRAS:-}
LLAMA=llama-cpp-python==0.3.36
# llama-cpp-python builds llama.cpp from source. Built for the build machine's own CPU
# (GGML_NATIVE, the default) it uses every instruction that CPU reports, AMX included, and a
# sandbox that reports AMX but does not allow it dies with "Illegal instruction" on the first
# token. So it is built once without GGML_NATIVE (AVX2-level code that runs on any x86-64 of
# the last decade) into a wheel kept outside pip's cache, whose wheel may be a native build.
# The multimodal library (LLAVA_BUILD, llama.cpp's mtmd) is left out: the llamacpp backend is
# text-only, and leaving it out takes about 2 of the build's 6 minutes off on 2 cores.
if [[ ",$EXTRAS," == *",local,"* ]]; then
  WHEELS="${XDG_CACHE_HOME:-$HOME/.cache}/nutrireason/portable-wheels"
  if ! ls "$WHEELS"/llama_cpp_python-0.3.36-*.whl >/dev/null 2>&1; then
    echo "building $LLAMA without GGML_NATIVE (once, about 4 minutes on 2 cores)" >&2
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF ${CMAKE_ARGS:-}" .venv/bin/python -m pip wheel \
      --disable-pip-version-check -q --no-cache-dir --no-deps -w "$WHEELS" "$LLAMA"
  fi
  .venv/bin/python -m pip install --disable-pip-version-check -q --no-deps \
    --force-reinstall "$WHEELS"/llama_cpp_python-0.3.36-*.whl
fi
.venv/bin/python -m pip install --disable-pip-version-check -q -e ".${EXTRAS:+[$EXTRAS]}"
