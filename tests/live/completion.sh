#!/bin/bash
# The bash completion script (completion/latop.bash), sourced in a bash with
# nothing else loaded (no bash-completion package): what COMPREPLY holds for
# commands, options, themes, query words (tables, fields after GROUP BY, SHOW
# and WHERE, a field's values) and recordings' file names.  latop says what
# fits (latop complete), so the candidates are the program's own.  Needs no
# root.
. "$(dirname "$0")/../lib.sh"
L=${LATOP_BIN:?}
top=${LATOP_TOP:?}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/rec/old"
ln -s "$L" "$tmp/bin/latop"
: > "$tmp/rec/busy.snap"; : > "$tmp/rec/idle.snap"; : > "$tmp/rec/notes.txt"

# comp WORD... : COMPREPLY, one a line, for the last WORD being completed
# (COMP_WORDS as bash splits them: an opening quote stays on its word, "="
# is a word of its own).
comp() {
	PATH="$tmp/bin:$PATH" bash --norc --noprofile -c '
		. "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
		_latop latop
		printf "%s\n" "${COMPREPLY[@]}"' comp "$top/completion/latop.bash" "$@"
}

# has DESCRIPTION WANT... -- WORD...: every WANT is a candidate
has() {
	local desc=$1 want=() w out miss=; shift
	while [ "$1" != -- ]; do want+=("$1"); shift; done; shift
	out=$(comp "$@")
	for w in "${want[@]}"; do
		printf '%s\n' "$out" | grep -qxF -- "$w" || miss+=" '$w'"
	done
	[ -z "$miss" ]; ok $? "$desc${miss:+ (missing$miss; got: $(printf '%s' "$out" | tr '\n' ' '))}"
}

# only DESCRIPTION WANT... -- WORD...: the candidates are exactly WANT...
# (in any order: readline sorts them)
only() {
	local desc=$1 want=() out; shift
	while [ "$1" != -- ]; do want+=("$1"); shift; done; shift
	out=$(comp "$@" | LC_ALL=C sort)
	[ "$out" = "$(printf '%s\n' "${want[@]}" | LC_ALL=C sort)" ]
	ok $? "$desc (got: $(printf '%s' "$out" | tr '\n' ' '))"
}

grep -qE '\b(bash-completion|_init_completion|_get_comp_words_by_ref)\b' "$top/completion/latop.bash"
ok $((! $?)) "the script needs nothing but bash's complete and compgen"
only "the commands" record replay report probes serve -- latop ''
only "a command's prefix" record replay report -- latop re
only "record's options from --qu" --query --quiet -- latop record --qu
has "the live view's options" --theme --interval --no-color -t -q -- latop -
only "probes' one option" --json -- latop probes --
only "a table after FROM, in a quoted query" "from syscalls" "from syscall_events" -- \
	latop -q "'from sysc"
has "a field after GROUP BY" "from syscalls group by comm" -- \
	latop report x.snap -q '"from syscalls group by co'
has "a field and a function after SHOW" "from syscalls show lat" "from syscalls show p99(" -- \
	latop -q "'from syscalls show "
has "a field after WHERE, with --query=" "from flows where rport" -- \
	latop --query = '"from flows where rpo'
has "a field's values after ==" "from syscalls where syscall == read" -- \
	latop record -o x.snap -q "'from syscalls where syscall == rea"
only "recordings (and folders) for replay" "$tmp/rec/busy.snap" "$tmp/rec/idle.snap" \
	"$tmp/rec/old" -- latop replay "$tmp/rec/"
only "recordings for report, after its options" "$tmp/rec/busy.snap" -- \
	latop report -q "from syscalls" --json "$tmp/rec/bu"
only "any file for record -o" "$tmp/rec/notes.txt" -- latop record -o "$tmp/rec/no"
only "a theme after --theme=" solarized-dark -- latop --theme = so
themes=$(cd "$top/themes" && ls *.theme | sed 's/\.theme$//' | sort)
[ "$(comp latop replay x.snap -t '' | sort)" = "$themes" ]
ok $? "-t offers every theme of themes/ ($(printf '%s' "$themes" | tr '\n' ' '))"
only "nothing after an unknown command" -- latop frobnicate ''
only "nothing for a duration" -- latop record -d ''
only "examples after --rotate" 1h 10m 100M -- latop record -o "$tmp/ring" --rotate ''
only "examples after --keep" 24h 7d 48 10G -- latop record --rotate 1h --keep ''
has "record's ring options" --rotate -- latop record --rot

# make install puts the script where bash-completion looks for it.
if [ -x "$top/latop" ]; then
	make -C "$top" -s --no-print-directory install DESTDIR="$tmp/dest" PREFIX=/usr >/dev/null 2>&1
	cmp -s "$top/completion/latop.bash" "$tmp/dest/usr/share/bash-completion/completions/latop"
	ok $? "make install puts it in PREFIX/share/bash-completion/completions/latop"
else
	skip "make install: latop is not built (make latop)"
fi
done_testing
