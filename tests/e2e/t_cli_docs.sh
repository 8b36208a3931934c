#!/usr/bin/env bash
# t_cli_docs.sh - the man page and the bash completion match the binary.
#
# Both are generated from the option table (pmutop --print-man /
# --print-completion). This checks what a user gets: `man -l` renders the
# page without warnings, every option --help lists is in the rendered page,
# and the completion script, sourced in bash, completes options, choices,
# event names (comma lists too), pids and the command after "--".
# e2e-lane: beside (no timing, share or lost-count checks: see run.sh)
source "$(dirname "$0")/lib.sh"
e2e_init

command -v man >/dev/null || skip "man (package man-db) is not installed"
errs=0
check() { # check NAME WANT GOT
	if [[ " $3 " == *" $2 "* ]]; then
		info "ok: $1 -> $2"
	else
		info "FAILED: $1: want \"$2\" in \"$3\""
		errs=$((errs + 1))
	fi
}

"$PMUTOP" --print-man >pmutop.1 || fail "--print-man exited $?"
"$PMUTOP" --print-completion >pmutop.bash || fail "--print-completion exited $?"
"$PMUTOP" --help >help.txt || fail "--help exited $?"

MANWIDTH=100 man --warnings -l pmutop.1 >man.txt 2>man.err
[[ -s man.err ]] && { show man.err; fail "man -l warns about pmutop.1"; }
grep -q "^PMUTOP(1)" man.txt || fail "man -l did not render a PMUTOP(1) page"
n=0
for opt in $(grep -oE -- '(^|[ ,])--[a-z][a-z-]+' help.txt | tr -d ' ,' | sort -u); do
	grep -qe "$opt" man.txt || { info "FAILED: $opt is in --help but not in the man page"; errs=$((errs + 1)); }
	n=$((n + 1))
done
info "ok: $n long options of --help are all in the rendered man page"
(( n >= 25 )) || fail "only $n options found in --help"

bash -n pmutop.bash || fail "completion script has a syntax error"
complete_words() { # complete_words WORD... : what TAB offers for the last word
	bash -c 'source ./pmutop.bash
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
		_pmutop; echo "${COMPREPLY[*]}"' _ "$@"
}
check "pmutop --dur" --duration "$(complete_words pmutop --dur)"
check "pmutop --list-e" --list-events "$(complete_words pmutop --list-e)"
check "pmutop -e cyc" cycles "$(complete_words pmutop -e cyc)"
check "pmutop -e cycles,task" cycles,task-clock "$(complete_words pmutop -e cycles,task)"
check "pmutop --event branch-m" branch-misses "$(complete_words pmutop --event branch-m)"
check "pmutop --format f" folded "$(complete_words pmutop --format f)"
check "pmutop --unwind=f" fp "$(complete_words pmutop --unwind = f)"
check "pmutop -p \$\$" "$$" "$(complete_words pmutop -p "$$")"
touch saved.pb.gz
check "pmutop --load sav" saved.pb.gz "$(complete_words pmutop --load sav)"
check "pmutop -- bas" bash "$(complete_words pmutop -- bas)"
(( errs == 0 )) || fail "$errs check(s) failed"
pass "man page renders and lists every option; completion completes options, events, pids, files"
