#!/usr/bin/env bash
# The lines a change touched, checked against .clang-format (git clang-format): untouched code is
# never reformatted or judged, so the check can hold from today without a commit that reformats
# the tree.  Prints the diff clang-format would make and fails when there is one.
# usage: scripts/format_check.sh [BASE]
#   BASE: the commit the change starts from.  Default: $GPUMAP_FORMAT_BASE, else where HEAD left
#   main (git merge-base HEAD origin/main, or main), else, on main itself, HEAD~1 (the last
#   commit).  Compares the work tree with BASE: in CI's clone that is the commits since BASE.
# Fix: git clang-format BASE (formats those lines in place), then commit.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v git-clang-format >/dev/null || { echo "format_check: git-clang-format missing: apt-get install clang-format (scripts/deps.sh)" >&2; exit 2; }
base=${1:-${GPUMAP_FORMAT_BASE:-}}
if [ -z "$base" ]; then
  for b in origin/main main; do
    if mb=$(git merge-base HEAD "$b" 2>/dev/null) && [ "$mb" != "$(git rev-parse HEAD)" ]; then base=$mb && break; fi
  done
fi
if [ -z "$base" ]; then
  git rev-parse -q --verify HEAD~1 >/dev/null || { echo "format_check: no earlier commit to compare with"; exit 0; }
  base=HEAD~1
fi
out=$(git clang-format --diff --extensions c,cc,h "$base" -- src tests include fuzz bench 2>&1) || {
  echo "$out" >&2
  exit 2
}
if grep -q '^diff --git' <<<"$out"; then
  echo "$out"
  echo "format_check: the lines above, changed since $(git rev-parse --short "$base"), are not as .clang-format writes them:" >&2
  echo "  run: git clang-format $(git rev-parse --short "$base")  (then commit)" >&2
  exit 1
fi
echo "format_check: the lines changed since $(git rev-parse --short "$base") are formatted"
