#!/usr/bin/env bash
# diff-comment.sh - the rotate-certs GitHub Action (action.yml at the top of
# the repository): runs `rotate-certs diff` between a pull request's base and
# head, writes the pull-request comment it makes of the result to a file, and
# keeps ONE comment on the pull request up to date (found by a hidden marker
# on its first line, updated, else created). It runs without GitHub: every
# input is an environment variable, the body is a file, and the GitHub API is
# one program that can be replaced (COMMENT_API).
#
# Inputs (environment):
#   DIFF_BASE       the base revision (required): the pull request's base commit.
#                   The diff starts at the merge base of DIFF_BASE and DIFF_HEAD,
#                   so it shows what the pull request's own commits change
#                   (GitHub's "Files changed"), whether DIFF_HEAD is the
#                   pull request's head or GitHub's merge commit.
#   DIFF_HEAD       the head revision (default: HEAD, the checked-out commit)
#   DIFF_PATHS      paths to compare, one per line (default: the whole repository)
#   DIFF_ARGS       more flags for diff, split on white space (--allow-unexplained,
#                   --now T); without --now the script passes its start time, so
#                   that its two runs of diff judge one instant
#   ROTATE_CERTS    the rotate-certs binary (default: rotate-certs on PATH)
#   COMMENT         when to post: changes (default: create a comment when trust
#                   changes, something breaks or diff fails; update an existing
#                   one whatever happened), always, never (body file only)
#   COMMENT_KEY     tells apart two gates on one pull request (default: default)
#   COMMENT_AUTHOR  only a comment by this login is updated (default:
#                   github-actions[bot], the author of comments made with the
#                   workflow's token; empty: any author)
#   COMMENT_FILE    where the body is written (default: a file in RUNNER_TEMP or TMPDIR)
#   PR_NUMBER, GITHUB_REPOSITORY   the pull request; without PR_NUMBER nothing is posted
#   GITHUB_TOKEN, GITHUB_API_URL   used by the default COMMENT_API (curl)
#   COMMENT_API     a program run as `COMMENT_API METHOD PATH [JSON_FILE]` that
#                   sends one request to the GitHub REST API and prints the
#                   response body; a failed request exits non-zero
#   GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, GITHUB_SERVER_URL, GITHUB_RUN_ID
#                   set by GitHub Actions: the outputs, the job summary (which
#                   gets the body too) and the link to the run in the footer
#
# Outputs (GITHUB_OUTPUT): exit-code, added, removed, breaks, planted, rolls,
# certificate-files (changed, not judged), warnings (the report's warnings
# and those diff printed on its own: duplicate names, files not read),
# comment-id, comment-action (created, updated or none), body-file, json-file.
#
# The job log: diff's messages as diff printed them, with workflow commands
# stopped so that nothing in them is taken for one, then each of diff's
# warnings and notes (and errors, when it failed), and each warning of the
# report (its file named), as a workflow command: an annotation on the run
# and the pull request. The comment lists diff's own lines below the report
# when it has room for them.
#
# Exit status: diff's - 0 nothing breaks and nothing is planted, 1 something
# breaks or is planted, 2 a usage error or a head tree diff cannot read (the
# comment then says that diff failed) - and 2 for this script's own usage
# errors, when nothing is posted. A comment that cannot be posted (a pull
# request from a fork gets a read-only token) is a warning, not a failure.
set -euo pipefail

prog=rotate-certs-diff
rotate_certs=${ROTATE_CERTS:-rotate-certs}
rotate_certs_name="rotate-certs diff" # how diff names itself on stderr
mode=${COMMENT:-changes}
key=${COMMENT_KEY:-default}
author=${COMMENT_AUTHOR-github-actions[bot]}
marker="<!-- rotate-certs diff: $key -->"
tmp=$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/rotate-certs-diff.XXXXXX")
body=${COMMENT_FILE:-$tmp/comment.md}
json=$tmp/diff.json
log=$tmp/diff.log
# GitHub refuses a comment body over 65,536 characters; diff's markdown stays
# within 65,000, which leaves room for the marker and the footer.
max_body=65536
max_lines=50

usage() {
	echo "$prog: $*" >&2
	exit 2
}

output() {
	if [ -n "${GITHUB_OUTPUT:-}" ]; then
		echo "$1" >>"$GITHUB_OUTPUT"
	fi
}

case $mode in
changes | always | never) ;;
*) usage "COMMENT must be changes, always or never, not \"$mode\"" ;;
esac
[ -n "${DIFF_BASE:-}" ] || usage "DIFF_BASE (the pull request's base commit) is not set"
command -v jq >/dev/null || usage "jq is not on PATH (GitHub's runners have it; apt-get install jq)"
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || usage "$(pwd) is not inside a git work tree"

# commit REV prints the commit REV names, or says how to get it.
commit() {
	git rev-parse --verify --quiet "$1^{commit}" ||
		usage "$1 is not a commit of this clone; check it out with its history (actions/checkout with fetch-depth: 0)"
}
base=$(commit "$DIFF_BASE")
head=$(commit "${DIFF_HEAD:-HEAD}")
merge_base=$(git merge-base "$base" "$head") ||
	usage "$DIFF_BASE and ${DIFF_HEAD:-HEAD} have no common history in this clone (actions/checkout with fetch-depth: 0)"

read -r -a extra <<<"${DIFF_ARGS:-}"
case " ${extra[*]-} " in
*" --now "* | *" --now="*) ;;
*) extra+=(--now "$(date -u +%Y-%m-%dT%H:%M:%SZ)") ;;
esac
paths=()
while IFS= read -r p; do
	[ -n "$p" ] && paths+=("$p")
done <<<"${DIFF_PATHS:-}"

# rundiff FORMAT runs diff; its status is diff's. The paths follow "--":
# none is taken for a revision or a flag.
rundiff() {
	"$rotate_certs" diff "$merge_base" "$head" -o "$1" ${extra[@]+"${extra[@]}"} ${paths[@]+-- "${paths[@]}"}
}

# counts reads the summary of diff's JSON into the outputs; it fails when
# the JSON is not diff's.
counts() {
	jq -e '.schemaVersion == "rotate-certs.dev/diff/v1" and (.summary | type == "object")' "$json" >/dev/null 2>&1 || return 1
	for field in added removed breaks planted rolls; do
		output "$field=$(jq -r ".summary.$field // 0" "$json")"
	done
	output "certificate-files=$(jq -r '.certificateFiles // [] | length' "$json")"
}

# changed says whether the diff found anything to tell: a count, or a
# Cluster API rollout, alert rule, policy or certificate file changed.
changed() {
	jq -e '([.summary[]? | numbers] | add // 0) + ([.rollouts[]?, .alerts[]?, .policies[]?, .certificateFiles[]?] | length) > 0' "$json" >/dev/null
}

# escape makes $1 the data of a workflow command.
escape() {
	local m=${1//%/%25}
	m=${m//$'\r'/%0D}
	echo "${m//$'\n'/%0A}"
}

# messages prints diff's own lines of its log without the command's
# name: warnings and notes, and every line when diff failed (its errors).
messages() {
	local line
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line#"$rotate_certs_name: "}
		case $line in
		"warning: "* | "note: "*) echo "$line" ;;
		*) [ "$status" -gt 1 ] && echo "$line" ;;
		esac
	done <"$log"
	return 0
}

# surface prints diff's log to the job log as diff printed it - workflow
# commands stopped around it, so that nothing in it is taken for one -
# then each warning, note and (when diff failed) error of diff's, and each
# warning of the report (with its file), as a workflow command; it prints
# how many warnings there were.
surface() {
	local token line n=0
	if [ -s "$log" ]; then
		token=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
		{
			echo "::stop-commands::$token"
			cat "$log"
			echo "::$token::"
		} >&2
	fi
	while IFS= read -r line; do
		case $line in
		"warning: "*) echo "::warning title=rotate-certs diff::$(escape "${line#warning: }")" >&2 && n=$((n + 1)) ;;
		"note: "*) echo "::notice title=rotate-certs diff::$(escape "${line#note: }")" >&2 ;;
		*) echo "::error title=rotate-certs diff::$(escape "$line")" >&2 ;; # diff failed: its errors
		esac
	done < <(messages)
	if $diffok; then
		jq -r 'def data: gsub("%"; "%25") | gsub("\r"; "%0D") | gsub("\n"; "%0A");
			def prop: data | gsub(":"; "%3A") | gsub(","; "%2C");
			.facts[]? | "::warning title=rotate-certs diff (\(.kind | prop))"
			+ (if (.resource.file // "") != "" then ",file=\(.resource.file | prop)" else "" end) + "::"
			+ ("\(.resource.kind) \(if .resource.namespace then .resource.namespace + "/" else "" end)\(.resource.name) \(.field)"
			   + (if .sha256 then ": \(.subject // "") sha256:\(.sha256[:12])" else "" end) + ": \(.message)" | data)' "$json" >&2
		n=$((n + $(jq '.facts // [] | length' "$json")))
	fi
	echo "$n"
}

# listed writes diff's warnings and notes (and errors, when it failed)
# for the comment: at most max_lines lines, each cut at 500 characters, as
# an indented code block, which nothing in them can end.
listed() {
	local all n
	all=$(messages)
	[ -n "$all" ] || return 0
	n=$(wc -l <<<"$all")
	printf '\n<details><summary>Printed by rotate-certs diff (%d line(s))</summary>\n\n' "$n"
	head -n "$max_lines" <<<"$all" | cut -c1-500 | sed 's/^/    /'
	if [ "$n" -gt "$max_lines" ]; then
		printf '\n%d more in the job log.\n' "$((n - max_lines))"
	fi
	printf '\n</details>\n'
}

# command_line is the diff command that shows the whole report.
command_line() {
	echo "$(git rev-parse --short "$merge_base") $(git rev-parse --short "$head")${paths[*]+ ${paths[*]}}"
}

# footer names what was compared and where it ran.
footer() {
	local run=""
	if [ -n "${GITHUB_SERVER_URL:-}" ] && [ -n "${GITHUB_RUN_ID:-}" ] && [ -n "${GITHUB_REPOSITORY:-}" ]; then
		run=" · [workflow run]($GITHUB_SERVER_URL/$GITHUB_REPOSITORY/actions/runs/$GITHUB_RUN_ID)"
	fi
	printf '\n<sub>`rotate-certs diff %s`%s</sub>\n' "$(command_line)" "$run"
}

status=0
rundiff json >"$json" 2>"$log" || status=$?
diffok=true
if [ "$status" -gt 1 ] || ! counts; then
	diffok=false
fi
output "warnings=$(surface)"
{
	echo "$marker"
	if $diffok; then
		# Markdown stays on its own: its status and messages are the JSON
		# run's (the job log has them once).
		rundiff markdown 2>/dev/null || true
	else
		echo "**rotate-certs diff failed** (exit $status): it could not compare this pull request's trust; the job log has its error."
	fi
} >"$body"
# diff's own lines go below the report when the comment has room for them.
section=$(listed)
ending=$(footer)
if [ "$(($(LC_ALL=C.UTF-8 wc -m <"$body") + ${#section} + ${#ending} + 2))" -gt "$max_body" ]; then
	section=$'\n'"$(messages | wc -l) line(s) printed by rotate-certs diff are in the job log."
fi
{
	[ -z "$section" ] || echo "$section"
	echo "$ending"
} >>"$body"
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
	cat "$body" >>"$GITHUB_STEP_SUMMARY"
fi
if [ "$(LC_ALL=C.UTF-8 wc -m <"$body")" -gt "$max_body" ]; then
	printf '%s\n**rotate-certs diff**: the report is longer than a comment can be; `rotate-certs diff %s` shows it.\n' \
		"$marker" "$(command_line)" >"$body"
fi
if ! $diffok && [ "$status" -eq 0 ]; then
	status=1 # a diff that failed fails the gate
fi
output "exit-code=$status"
output "body-file=$body"
output "json-file=$json"

# api METHOD PATH [JSON_FILE] sends one request to the GitHub REST API.
api() {
	if [ -n "${COMMENT_API:-}" ]; then
		"$COMMENT_API" "$@"
		return
	fi
	local args=(--silent --show-error --location --fail-with-body -X "$1"
		-H "Accept: application/vnd.github+json" -H "X-GitHub-Api-Version: 2022-11-28"
		-H "Authorization: Bearer ${GITHUB_TOKEN:?GITHUB_TOKEN is not set}")
	if [ -n "${3:-}" ]; then
		args+=(-H "Content-Type: application/json" --data-binary "@$3")
	fi
	curl "${args[@]}" "${GITHUB_API_URL:-https://api.github.com}$2"
}

# existing prints the id of the pull request's comment that this gate
# keeps (its first line is the marker; by COMMENT_AUTHOR when set), or
# nothing. The list is read a page of 100 at a time.
existing() {
	local page=1 list n id
	while :; do
		list=$(api GET "/repos/$GITHUB_REPOSITORY/issues/$PR_NUMBER/comments?per_page=100&page=$page") || return 1
		id=$(jq -r --arg m "$marker" --arg a "$author" \
			'[.[] | select((.body // "" | split("\n")[0] | rtrimstr("\r")) == $m)
			      | select($a == "" or .user.login == $a) | .id][0] // empty' <<<"$list") || return 1
		n=$(jq 'length' <<<"$list")
		if [ -n "$id" ] || [ "$n" -lt 100 ]; then
			echo "$id"
			return
		fi
		page=$((page + 1))
	done
}

# post creates or updates the comment and prints the decision.
post() {
	local id request response action
	id=$(existing) || return 1
	if [ -z "$id" ] && [ "$mode" = changes ] && $diffok && [ "$status" -eq 0 ] && ! changed; then
		echo "none"
		return
	fi
	request=$tmp/request.json
	jq -Rs '{body: .}' <"$body" >"$request"
	if [ -n "$id" ]; then
		response=$(api PATCH "/repos/$GITHUB_REPOSITORY/issues/comments/$id" "$request") || return 1
		action=updated
	else
		response=$(api POST "/repos/$GITHUB_REPOSITORY/issues/$PR_NUMBER/comments" "$request") || return 1
		action=created
	fi
	echo "$action $(jq -r '.id // empty' <<<"$response")"
}

decision="none"
if [ "$mode" != never ] && [ -n "${PR_NUMBER:-}" ]; then
	[ -n "${GITHUB_REPOSITORY:-}" ] || usage "GITHUB_REPOSITORY (owner/name) is not set"
	if ! decision=$(post); then
		echo "::warning::$prog: could not post the comment (a pull request from a fork has a read-only token); the job summary has the report" >&2
		decision="none"
	fi
fi
read -r action id <<<"$decision"
output "comment-action=$action"
output "comment-id=${id:-}"
echo "$prog: comment $action${id:+ $id}; body in $body" >&2
exit "$status"
