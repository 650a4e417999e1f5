#!/usr/bin/env bash
# Installed, not only editable: build the sdist and wheel, check them, install the wheel into a clean
# virtualenv and use it as a consumer would (README.md, "Heavier commands"). Missing package data or
# entry points fail here. Usage: .ci/wheel_smoke.sh [PYTHON]   (default: python3)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${1:-python3}
ROOT=$PWD
WORK=$(mktemp -d "${TMPDIR:-/tmp}/llmts-wheel-smoke.XXXXXX")
SERVER_PID=""
cleanup() {
    if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

echo "== build sdist and wheel"
"$PYTHON" -m venv "$WORK/build-venv"
"$WORK/build-venv/bin/python" -m pip install --quiet build twine
"$WORK/build-venv/bin/python" -m build --outdir "$WORK/dist" "$ROOT" >"$WORK/build.log" 2>&1 \
    || { cat "$WORK/build.log"; exit 1; }
"$WORK/build-venv/bin/python" -m twine check --strict "$WORK"/dist/*
WHEEL=$(ls "$WORK"/dist/llmts-*.whl)
SDIST=$(ls "$WORK"/dist/llmts-*.tar.gz)
# The wheel must carry the typing marker; the sdist must carry what the docs and tests need to rebuild.
"$WORK/build-venv/bin/python" - "$WHEEL" "$SDIST" <<'EOF'
import sys, tarfile, zipfile
wheel = set(zipfile.ZipFile(sys.argv[1]).namelist())
sdist = {n.split("/", 1)[1] for n in tarfile.open(sys.argv[2]).getnames() if "/" in n}
for name in ("llmts/py.typed", "llmts/server/cli.py", "llmts/pytest/plugin.py", "llmts/catalog/sdk_env.py"):
    assert name in wheel, f"wheel lacks {name}"
# The dashboard's static files are package data (docs/dashboard.md): every file of the source tree.
import pathlib
for path in sorted(p for p in pathlib.Path("llmts/server/api/dashboard_static").rglob("*") if p.is_file()):
    assert path.as_posix() in wheel, f"wheel lacks {path.as_posix()}"
    assert path.as_posix() in sdist, f"sdist lacks {path.as_posix()}"
entry_points = next(n for n in wheel if n.endswith(".dist-info/entry_points.txt"))
text = zipfile.ZipFile(sys.argv[1]).read(entry_points).decode()
assert "llmts = llmts.server.cli:main" in text and "[pytest11]" in text, text
for name in ("pyproject.toml", "README.md", "llmts/py.typed"):
    assert name in sdist, f"sdist lacks {name}"
print("artifacts ok:", sys.argv[1].rsplit("/", 1)[1], sys.argv[2].rsplit("/", 1)[1])
EOF

echo "== install the wheel into a clean virtualenv (${SECONDS}s)"
"$PYTHON" -m venv "$WORK/venv"
VENV_PY="$WORK/venv/bin/python"
"$VENV_PY" -m pip install --quiet "$WHEEL" openai pytest
# From an empty directory with no PYTHONPATH, so only the installed package can be imported.
cd "$WORK"
unset PYTHONPATH
"$VENV_PY" -c "import llmts, sys; assert llmts.__file__.startswith(sys.prefix), llmts.__file__"

echo "== llmts serve on a free port, one SDK call (${SECONDS}s)"
"$WORK/venv/bin/llmts" serve --port 0 --ready-file "$WORK/ready" >"$WORK/serve.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 150); do [ -s "$WORK/ready" ] && break; sleep 0.1; done
[ -s "$WORK/ready" ] || { cat "$WORK/serve.log"; echo "llmts serve did not start"; exit 1; }
URL=$(cat "$WORK/ready")
"$VENV_PY" - "$URL" <<'EOF'
import sys
import openai
client = openai.OpenAI(base_url=sys.argv[1] + "/openai/v1", api_key="k", _strict_response_validation=True)
answer = client.chat.completions.create(model="gpt-4.1-mini", messages=[{"role": "user", "content": "ping"}])
assert answer.choices[0].message.content == "ping", answer
print("SDK call ok against", sys.argv[1])
EOF
# The dashboard comes from the installed package data: the page and every module it imports.
"$VENV_PY" - "$URL" <<'EOF'
import posixpath, re, sys, urllib.request
base = sys.argv[1]
with urllib.request.urlopen(base + "/dashboard") as page:
    html = page.read().decode()
    assert "script-src 'self'" in page.headers["Content-Security-Policy"], page.headers
pending, seen = re.findall(r'(?:src|href)="(/dashboard/static/[^"]+)"', html), set()
while pending:
    path = pending.pop()
    if path not in seen:
        seen.add(path)
        with urllib.request.urlopen(base + path) as response:
            text = response.read().decode()
        folder = posixpath.dirname(path)
        pending += [posixpath.normpath(posixpath.join(folder, t)) for t in re.findall(r'from "(\.[^"]+)"', text)]
assert any(p.endswith("/app.js") for p in seen) and any("/views/" in p for p in seen), seen
print("dashboard ok:", len(seen), "files served")
EOF
# llmts env's output, evaluated, lets a client built with no arguments reach the server.
(
    eval "$("$WORK/venv/bin/llmts" env --url "$URL")"
    "$VENV_PY" -c "
import openai
answer = openai.OpenAI().chat.completions.create(model='any', messages=[{'role': 'user', 'content': 'env'}])
assert answer.choices[0].message.content == 'env', answer
print('llmts env ok')
"
)

echo "== the pytest plugin in a throwaway project (${SECONDS}s)"
mkdir "$WORK/project"
cat >"$WORK/project/test_consumer.py" <<'EOF'
import os

import openai


def test_session_fixture_answers_from_a_script(llmts_session):
    llmts_session.configure({"scenarios": [{"responses": [{"text": "scripted"}]}]})
    client = llmts_session.openai_client(max_retries=0)
    answer = client.chat.completions.create(model="gpt-4.1-mini", messages=[{"role": "user", "content": "x"}])
    assert answer.choices[0].message.content == "scripted"
    assert [entry["status"] for entry in llmts_session.requests()] == [200]


def test_env_fixture_points_clients_built_from_the_environment(llmts_session, llmts_env):
    assert os.environ["OPENAI_BASE_URL"] == llmts_session.provider_base + "/openai/v1"
    answer = openai.OpenAI().chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert answer.choices[0].message.content == "hi"
EOF
(cd "$WORK/project" && "$VENV_PY" -m pytest -q -p no:cacheprovider test_consumer.py)
echo "wheel smoke ok (${SECONDS}s)"
