#!/usr/bin/env bash
# Issue 8 points 6, 10, 11, 13 on a real GPU host, from the repo root with the carried build/:
#   bash tools/device/checks/json_terminal_container.sh            (GPUMAP=path/to/gpumap to override)
# Prints one PASS/FAIL line per check and exits 1 when any failed.
#   - point 11: every command's --json on real NVML matches the contract table in docs/cli.md
#     (the same checker as tests/cli_json_contract_test.cc, in Python);
#   - point 10: on a terminal (util-linux `script`) of 80 columns map/list/doctor fit; into a pipe the
#     UUIDs are whole and no escape code is written; NO_COLOR removes colour;
#   - point 13: a bare host never counts as a container; --env NVIDIA_VISIBLE_DEVICES=1 predicts a
#     container holding only GPU 1, renumbered 0, its host UUID kept;
#   - point 6: MIG cannot be enabled on this host (we must not change it): MIG checks are reported as
#     SKIP with the MIG mode NVML reports.
set -u
G=${GPUMAP:-build/gpumap}
fails=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
check() { if eval "$2"; then pass "$1"; else fail "$1"; fi; }

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export GPUMAP_LOCK_DIR=$TMP/locks
# The last GPU stands for "another GPU" (GPU 1 on two GPUs; on one GPU, GPU 0 itself).
L=$(( $(nvidia-smi -L | grep -c '^GPU') - 1 ))

# --- point 11: the JSON contract on real NVML -------------------------------------------------
run_json() {  # name, stderr|stdout, command...
  local name=$1 stream=$2; shift 2
  if [ "$stream" = stderr ]; then "$@" 2>"$TMP/$name.json" >/dev/null; else "$@" >"$TMP/$name.json" 2>/dev/null; fi
}
run_json list stdout "$G" list --json
run_json map stdout "$G" map --json
run_json map-check stdout "$G" map --check --json --env CUDA_VISIBLE_DEVICES=1,0
run_json explain stdout "$G" explain --json --env CUDA_VISIBLE_DEVICES=1,GPU-zz
if [ $L -gt 0 ]; then run_json which stdout "$G" which --json $L 0; else run_json which stdout "$G" which --json 0; fi
run_json verify stdout "$G" verify --json --expect 0 --prefix
run_json doctor stdout "$G" doctor --json
if [ $L -gt 0 ]; then run_json pick stdout "$G" pick --json --exclude $L; else run_json pick stdout "$G" pick --json; fi
run_json run stderr "$G" run --json -- true
run_json bind stderr env LOCAL_RANK=$L "$G" bind --json -- true
run_json ps stdout "$G" ps --json
python3 - "$TMP" docs/cli.md >"$TMP/contract.txt" <<'PY'
import json, re, sys
tmp, doc = sys.argv[1], sys.argv[2]
rows, inside = {}, False
for line in open(doc):
    if "<!-- contract:begin -->" in line: inside = True; continue
    if "<!-- contract:end -->" in line: break
    if inside and line.startswith("| ") and "`" in line:
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        obj, key, typ = cells[0], cells[1].strip("`"), cells[2].replace("\\|", "|")
        rows.setdefault(obj, []).append((key, typ.rstrip("?"), typ.endswith("?")))
def keys(t):
    out = []
    for k, ty, opt in rows[t]:
        out += keys(ty) if k == "*" else [(k, ty, opt)]
    return out
def check(v, t, path):
    errs = []
    for alt in t.split("|"):
        e = one(v, alt, path)
        if not e: return []
        errs += e
    return errs
def one(v, t, path):
    if t.endswith("[]"):
        if not isinstance(v, list): return [f"{path}: want {t}"]
        return [e for i, x in enumerate(v) for e in check(x, t[:-2], f"{path}[{i}]")]
    simple = {"null": v is None, "bool": isinstance(v, bool), "int": isinstance(v, int) and not isinstance(v, bool),
              "number": isinstance(v, (int, float)) and not isinstance(v, bool), "string": isinstance(v, str),
              "object": isinstance(v, dict)}
    if t in simple: return [] if simple[t] else [f"{path}: want {t}, got {json.dumps(v)[:60]}"]
    if not isinstance(v, dict): return [f"{path}: want {t}"]
    errs, known = [], set()
    for k, ty, opt in keys(t):
        known.add(k)
        if k not in v:
            if not opt: errs.append(f"{path}.{k}: missing")
        else:
            errs += check(v[k], ty, f"{path}.{k}")
    errs += [f"{path}.{k}: not in the contract" for k in v if k not in known]
    return errs
for name, typ in [("list", "list"), ("map", "map"), ("map-check", "map"), ("explain", "explain"), ("which", "which"),
                  ("verify", "verify"), ("doctor", "doctor"), ("pick", "pick"), ("run", "run"), ("bind", "bind"), ("ps", "ps")]:
    try:
        doc_ = json.load(open(f"{tmp}/{name}.json"))
    except Exception as e:
        print(f"FAIL json contract {name}: not one JSON document ({e})"); continue
    errs = check(doc_, typ, typ)
    real = doc_.get("simulated") is False
    print(("PASS" if not errs and real else "FAIL") + f" json contract {name} (simulated={doc_.get('simulated')})"
          + ("" if not errs else ": " + "; ".join(errs[:5])))
PY
cat "$TMP/contract.txt"
fails=$((fails + $(grep -c '^FAIL' "$TMP/contract.txt")))

# --- point 10: output for people ----------------------------------------------------------------
tty_run() { COLUMNS=${COLUMNS_WANT:-80} TERM=xterm script -qec "$*" /dev/null | tr -d '\r'; }
width() { python3 -c 'import re,sys; print(max((len(re.sub(r"\x1b\[[0-9;]*m","",l)) for l in sys.stdin.read().split("\n")), default=0))'; }
for c in map list doctor; do
  tty_run "$G" $c >"$TMP/tty-$c.txt"
  w=$(width <"$TMP/tty-$c.txt")
  check "tty $c fits 80 columns (widest line $w)" '[ "$w" -le 80 ]'
done
U0=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i 0 | tr -d ' ')
check "tty map shows the short UUID ${U0:0:12}…" 'grep -q "${U0:0:12}…" "$TMP/tty-map.txt"'
"$G" map >"$TMP/pipe-map.txt"
check "pipe map has the full UUID $U0" 'grep -q "$U0" "$TMP/pipe-map.txt"'
check "pipe map has no escape code" '! grep -q $'"'"'\x1b'"'"' "$TMP/pipe-map.txt"'
NO_COLOR=1 tty_run "$G" doctor --env CUDA_VISIBLE_DEVICES=7 >"$TMP/nocolor.txt"
check "NO_COLOR: no escape code on a terminal" '! grep -q $'"'"'\x1b\['"'"' "$TMP/nocolor.txt"'
tty_run "$G" doctor --env CUDA_VISIBLE_DEVICES=7 >"$TMP/color.txt"
check "terminal: severities coloured" 'grep -q $'"'"'\x1b\[3[136]m\['"'"' "$TMP/color.txt"'
timeout -s INT 1 "$G" ps --watch 0.2 >"$TMP/watch.txt"
check "ps --watch into a pipe: no escape code, several frames" \
  '! grep -q $'"'"'\x1b'"'"' "$TMP/watch.txt" && [ "$(grep -c "^this host" "$TMP/watch.txt")" -ge 2 ]'

# --- point 13: containers -----------------------------------------------------------------------
"$G" doctor --json >"$TMP/doc.json"
in_ctr=$( [ -e /.dockerenv ] || [ -e /run/.containerenv ] && echo yes || echo no)
U1=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i $L | tr -d ' ')
if [ "$in_ctr" = no ]; then
  "$G" map --json --env NVIDIA_VISIBLE_DEVICES=$L >"$TMP/ctr.json"
  check "--env NVIDIA_VISIBLE_DEVICES=$L: one GPU, index 0, host UUID $U1" \
    'python3 -c "import json,sys; j=json.load(open(sys.argv[1])); g=j[\"gpus\"]; d=j[\"cuda\"][\"devices\"]; sys.exit(not (len(g)==1 and g[0][\"nvml_index\"]==0 and g[0][\"uuid\"]==sys.argv[2] and d[0][\"uuid\"]==sys.argv[2]))" "$TMP/ctr.json" "$U1"'
else
  echo "SKIP container what-if: this host itself is a container"
fi
# (two GPUs out of PCI order need CUDA_VISIBLE_DEVICES inside too; one GPU does not)
if [ $L -gt 0 ]; then ask=($L 0) want="'\"device=$U1,$U0\"' -e CUDA_VISIBLE_DEVICES=$U1,$U0"
else ask=(0) want="'\"device=$U0\"' IMAGE"; fi
"$G" which "${ask[@]}" | grep -qF "docker run --gpus $want" \
  && pass "which ${ask[*]} prints the docker run --gpus form" || fail "which ${ask[*]} prints the docker run --gpus form"

# --- point 6: MIG -------------------------------------------------------------------------------
mig=$(nvidia-smi --query-gpu=mig.mode.current --format=csv,noheader | tr '\n' ' ')
echo "SKIP MIG checks: MIG mode on this host is [$mig] and must not be changed here (tests: CliMig.* on the simulated mig host)"

echo "== $fails failed"
[ "$fails" -eq 0 ]
