#!/usr/bin/env bash
# render-and-commit.sh DIR POLICY
#
# Renders DIR in place with `rotate-certs render DIR --policy POLICY` and
# commits the result when something changed; does nothing (exit 0, no commit)
# when the render changed nothing. Run it from anywhere inside the git work
# tree that holds DIR; it never pushes (the workflow does, after a commit).
#
#   ROTATE_CERTS   the rotate-certs binary (default: rotate-certs on PATH)
#   GITHUB_OUTPUT  when set (GitHub Actions), committed=true|false is written
#                  to it for later steps
#
# Exit codes: 0 committed or nothing to do; 1 the render failed (nothing
# written, nothing committed; the errors are on stderr); 2 usage errors, or
# DIR had uncommitted changes before the render.
set -euo pipefail

prog=render-and-commit
if [ "$#" -ne 2 ]; then
	echo "usage: $0 DIR POLICY" >&2
	exit 2
fi
dir=$1
policy=$2
rotate_certs=${ROTATE_CERTS:-rotate-certs}

output() {
	if [ -n "${GITHUB_OUTPUT:-}" ]; then
		echo "$1" >>"$GITHUB_OUTPUT"
	fi
}

if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	echo "$prog: $(pwd) is not inside a git work tree" >&2
	exit 2
fi
if [ ! -d "$dir" ]; then
	echo "$prog: $dir is not a directory" >&2
	exit 2
fi
# Only the render's own changes may be committed: refuse to sweep up edits
# someone left in DIR.
if [ -n "$(git status --porcelain -- "$dir")" ]; then
	echo "$prog: $dir has uncommitted changes; commit or stash them first:" >&2
	git status --short -- "$dir" >&2
	exit 2
fi

# On any error rotate-certs writes nothing and exits 1; set -e stops here.
"$rotate_certs" render "$dir" --policy "$policy"

if [ -z "$(git status --porcelain -- "$dir")" ]; then
	echo "$prog: $dir is up to date, nothing to commit" >&2
	output committed=false
	exit 0
fi

git add --all -- "$dir"
changes=$(git diff --cached --name-status -- "$dir" | awk -F '\t' '
	$1 == "A" { print "- added:    " $2; next }
	$1 == "D" { print "- deleted:  " $2; next }
	{ print "- modified: " $NF }')
count=$(printf '%s\n' "$changes" | wc -l | tr -d ' ')

# Commit only DIR, whatever else is staged.
git commit --quiet --file - -- "$dir" <<EOF
rotate-certs: render $dir ($count file(s) changed)

\`rotate-certs render $dir --policy $policy\` changed:
$changes
EOF
echo "$prog: committed $(git rev-parse --short HEAD):" >&2
printf '%s\n' "$changes" >&2
output committed=true
