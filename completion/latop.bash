# SPDX-License-Identifier: GPL-3.0-or-later
# bash completion for latop(1): commands, options, themes, query words (tables,
# fields, functions, keywords, a field's values) and recordings' file names.
# latop itself says what fits ('latop complete CWORD WORD...', see latop(1)),
# so this script holds no list.  Needs only bash's complete and compgen.

_latop()
{
	local cur=${COMP_WORDS[COMP_CWORD]} kind line
	local -a out=()

	COMPREPLY=()
	while IFS= read -r line; do
		out+=("$line")
	done < <(command latop complete "$COMP_CWORD" "${COMP_WORDS[@]}" 2>/dev/null)
	kind=${out[0]}
	case $kind in
	words)
		COMPREPLY=("${out[@]:1}") ;;
	files|snapshots)
		# a quoted name is completed without its opening quote
		cur=${cur#[\"\']}
		local IFS=$'\n'
		if [ "$kind" = snapshots ]; then
			COMPREPLY=($(compgen -f -X '!*.snap' -- "$cur") $(compgen -d -- "$cur"))
			[ ${#COMPREPLY[@]} -gt 0 ] || COMPREPLY=($(compgen -f -- "$cur"))
		else
			COMPREPLY=($(compgen -f -- "$cur"))
		fi
		compopt -o filenames 2>/dev/null ;;
	esac
	# a function's "(": the arguments follow without a space
	if [ ${#COMPREPLY[@]} -eq 1 ] && [ "${COMPREPLY[0]%(}" != "${COMPREPLY[0]}" ]; then
		compopt -o nospace 2>/dev/null
	fi
	return 0
}
complete -F _latop latop
