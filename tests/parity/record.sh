#!/usr/bin/env bash
# Record what real n8n outputs for the parity corpus: installs n8n (npm registry) into a scratch
# folder, imports every workflow of tests/parity/workflows/, runs each with
# `n8n execute --rawOutput` (many at once with `n8n execute-batch --snapshot`) against the scripted model of tests/parity/peer.py, and writes
# the execution to tests/parity/recorded/<name>.json.
#
#   tests/parity/record.sh [NAME ...]      # all workflows, or only these (file names without .json)
#
# N8N_DIR: the scratch folder (default /work/n8n); PYTHON: the interpreter for the peer.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
N8N_DIR=${N8N_DIR:-/work/n8n}
N8N_VERSION=1.123.81
PYTHON=${PYTHON:-python3}  # the peer and the JSON steps need only the standard library
OUT="$HERE/recorded"

if [ ! -x "$N8N_DIR/node_modules/.bin/n8n" ]; then
  mkdir -p "$N8N_DIR"
  (cd "$N8N_DIR"
   printf '{"dependencies":{"n8n":"%s"},"overrides":{"xlsx":"0.18.5"}}\n' "$N8N_VERSION" > package.json
   npm install --ignore-scripts   # xlsx is overridden: its usual source is not a registry
   npm rebuild sqlite3 --nodedir=/usr)
fi
N8N="$N8N_DIR/node_modules/.bin/n8n"

# A fresh n8n home for each recording, so no earlier workflow or memory is around.
HOME_DIR="$N8N_DIR/parity-home"
rm -rf "$HOME_DIR"
mkdir -p "$HOME_DIR" "$OUT"
export N8N_USER_FOLDER="$HOME_DIR" N8N_DIAGNOSTICS_ENABLED=false N8N_VERSION_NOTIFICATIONS_ENABLED=false \
  N8N_TEMPLATES_ENABLED=false N8N_RUNNERS_ENABLED=false N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS=false \
  N8N_EXPRESSION_ENGINE=legacy GENERIC_TIMEZONE=UTC TZ=UTC

# The scripted model: a loopback OpenAI-compatible server; its URL goes into the credential.
WORK=$(mktemp -d)
trap 'exec 3>&- 2>/dev/null; rm -rf "$WORK"' EXIT
exec 3> >(cd "$ROOT" && "$PYTHON" -m tests.parity.peer > "$WORK/peer-url")
for _ in $(seq 50); do [ -s "$WORK/peer-url" ] && break; sleep 0.2; done
PEER_URL=$(head -1 "$WORK/peer-url")
echo "scripted model at $PEER_URL"
printf '[{"id":"cred0000000001","name":"OpenAi account","type":"openAiApi","data":{"apiKey":"sk-parity","url":"%s"}},
{"id":"cred0000000002","name":"OpenRouter account","type":"openRouterApi","data":{"apiKey":"sk-parity","url":"%s"}},
{"id":"cred0000000003","name":"DeepSeek account","type":"deepSeekApi","data":{"apiKey":"sk-parity","url":"%s"}},
{"id":"cred0000000004","name":"Anthropic account","type":"anthropicApi","data":{"apiKey":"sk-parity","url":"%s"}},
{"id":"cred0000000005","name":"Groq account","type":"groqApi","data":{"apiKey":"sk-parity"}},
{"id":"cred0000000011","name":"Header Auth account","type":"httpHeaderAuth","data":{"name":"X-Api-Key","value":"key-parity"}},
{"id":"cred0000000012","name":"Bearer Auth account","type":"httpBearerAuth","data":{"token":"token-parity"}},
{"id":"cred0000000013","name":"Query Auth account","type":"httpQueryAuth","data":{"name":"api_key","value":"key parity"}},
{"id":"cred0000000014","name":"Basic Auth account","type":"httpBasicAuth","data":{"user":"ada","password":"pass parity"}},
{"id":"cred0000000006","name":"Google Gemini(PaLM) Api account","type":"googlePalmApi","data":{"apiKey":"sk-parity","host":"%s"}}]\n' \
  "$PEER_URL" "$PEER_URL" "$PEER_URL" "${PEER_URL%/v1}" "${PEER_URL%/v1}" > "$WORK/creds.json"
export GROQ_BASE_URL="${PEER_URL%/v1}"  # the Groq SDK's own setting: its requests go to the scripted model
"$N8N" import:credentials --input="$WORK/creds.json" > /dev/null

if [ $# -gt 0 ]; then names=("$@"); else names=(); for f in "$HERE"/workflows/*.json; do names+=("$(basename "$f" .json)"); done; fi
# The REST API's origin (tests/peers/rest_api.py, served by the same peer) goes where a workflow says
# http://parity-peer.invalid; the recordings say it again instead of the port of this run.
ORIGIN="${PEER_URL%/v1}"
mkdir -p "$WORK/import"
for name in "${names[@]}"; do sed "s#http://parity-peer.invalid#$ORIGIN#g" "$HERE/workflows/$name.json" > "$WORK/import/$name.json"; done
"$N8N" import:workflow --separate --input="$WORK/import" > /dev/null

# Successful runs: one `n8n execute-batch` process for all (n8n starts in ~5 s, on a busy machine far
# longer); its --snapshot files hold the same JSON `n8n execute --rawOutput` prints.
ids=()
for name in "${names[@]}"; do ids+=("$("$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$HERE/workflows/$name.json")"); done
mkdir -p "$WORK/snap"
(IFS=,; "$N8N" execute-batch --ids="${ids[*]}" --snapshot="$WORK/snap" --retries=0 > "$WORK/batch.log" 2>&1) || true

for i in "${!names[@]}"; do
  name=${names[$i]} id=${ids[$i]}
  if [ -s "$WORK/snap/$id-snapshot.json" ]; then
    cp "$WORK/snap/$id-snapshot.json" "$WORK/stdout"
  else
    # A failed run leaves no snapshot: `n8n execute` prints log lines, then the execution as JSON.
    "$N8N" execute --id="$id" --rawOutput > "$WORK/stdout" 2> "$WORK/stderr" || true
  fi
  if "$PYTHON" - "$WORK/stdout" "$OUT/$name.json" "$ORIGIN" <<'PY'
import json, re, sys
text = open(sys.argv[1], encoding="utf-8").read().replace(sys.argv[3], "http://parity-peer.invalid")
text = text.replace(sys.argv[3].removeprefix("http://"), "parity-peer.invalid")
match = re.search(r"^\{\s*$", text, re.M)
if match is None:
    sys.exit(1)
doc, _ = json.JSONDecoder().raw_decode(text[match.start():])
with open(sys.argv[2], "w", encoding="utf-8") as fh:
    json.dump(doc, fh, indent=2, ensure_ascii=False)
    fh.write("\n")
PY
  then
    echo "recorded $name ($("$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["status"])' "$OUT/$name.json"))"
  else
    echo "FAILED to record $name:"; tail -5 "$WORK/stdout" "$WORK/stderr" "$WORK/batch.log" 2>/dev/null
  fi
done
