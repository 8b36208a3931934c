#!/usr/bin/env bash
# t_unwind_engines.sh - the ptrace and fp engines on the known-answer
# workloads, against the core issue's bounds.
#
# For --unwind=ptrace and --unwind=fp:
#  - shares (ten functions, k/55 of the work each): every function's flat
#    share within 1.0 pp (or 4 sigma of sampling noise) of the truth, and
#    the stacks right. The truth is k/55 for fp, which leaves the thread
#    alone. Not for ptrace: its stop at every sample changes how long the
#    functions run once pmutop is slow to serve the stops (an ASan build, a
#    busy core): perf record of the same target over the same seconds found
#    the same moves as pmutop (H +1.05 / +1.11 pp, I +1.44 / +1.08 pp from
#    k/55 with the other core busy), and a CI run had pmutop 2.13 pp off.
#    So a second pmutop with the fp engine watches the same process (-p,
#    side by side; both attach while the target waits at its start gate,
#    and both stop when it exits, so they see the same run), and the
#    ptrace profile's shares are judged against that observer's (k/55
#    printed beside). Stacks:
#    ptrace (DWARF,
#    from the stopped thread) gives leaf;round_once;main on >= 90% of the
#    ten functions' samples; fp (the kernel's frame-pointer walk) reaches
#    main on >= 90% (round_once, the caller of a frameless leaf, is lost:
#    README "Unwinding engines");
#  - threads (ten identical threads, launched and recorded until they
#    exit): each worker's share of the samples within 4 sigma of sampling
#    noise of its share of what it really ran, which the workload counts on
#    itself (thread_shares in lib.sh). Not the nominal 10%: ptrace stops a
#    thread per sample, which moves CPU between the threads (1.1-3.9 pp from
#    10% measured on the loaded 2-CPU test VM), and a busy machine does not
#    share two CPUs equally among ten threads anyway (fp 3.5 pp from 10% at
#    load 17); the spread from 10% is printed;
#  - ptrace prints its summary (stops, skid).
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl shares threads

DUR=$(quick_or 5 3)
SHARES_TOL=1.0
pick_event
if [[ $EV == cycles ]]; then SP=1000000 TP=1000000; else SP=100000 TP=250000; fi
info "event $EV, periods $SP (shares) and $TP (threads), ${DUR} s each (threads: the workload's whole run)"

errs=0
bad() { info "FAILED: $*"; errs=$((errs + 1)); }

for eng in ptrace fp; do
	# ---- shares ----
	if [[ $eng == ptrace ]]; then
		# The target and an fp observer beside the ptrace run (see the
		# top). The target waits at its start gate until both profilers
		# are attached, then runs DUR seconds and exits, so both profiles
		# cover the same run exactly: observer and ptrace run started a
		# few hundred ms apart (ASan) with --duration cut the rounds at
		# different places and differed by up to 1.9 pp on J.
		rm -f gate; mkfifo gate
		WL_GATE=$T/gate start_bg "$W/shares" "$DUR"
		SPID=$BG_PID
		wait_started "$SPID"
		info "\$ pmutop --no-tui --unwind=fp -e $EV --period $SP -p $SPID (observer, beside; until the target exits)"
		timeout -k 5 90 "$PMUTOP" --no-tui --unwind=fp -e "$EV" --period "$SP" \
			--dump shares_obs.pb.gz -p "$SPID" >shares_obs.out 2>shares_obs.err &
		OBS=$!
		info "\$ pmutop --no-tui --unwind=ptrace -e $EV --period $SP --dump shares_ptrace.pb.gz -p $SPID (until the target exits)"
		timeout -k 5 90 "$PMUTOP" --no-tui --unwind=ptrace -e "$EV" --period "$SP" \
			--dump shares_ptrace.pb.gz -p "$SPID" >shares_ptrace.out 2>shares_ptrace.err &
		PTR=$!
		# Attached: the ptrace pmutop has seized the target, and each
		# pmutop holds its perf_event fds. Then the gate opens.
		for _ in $(seq 600); do
			tr=$(awk '/^TracerPid:/ { print $2 }' "/proc/$SPID/status" 2>/dev/null)
			[[ -n $tr && $tr != 0 ]] && break
			sleep 0.05
		done
		open_gate gate "$OBS" "$PTR" ||
			{ bad "ptrace/shares: the two pmutops did not attach within 30 s"; kill "$SPID" 2>/dev/null; }
		wait "$PTR"
		RC=$?
		wait "$OBS"
		ORC=$?
		kill "$SPID" 2>/dev/null
		show shares_obs.err 3
		: >flat_obs.txt
		if (( ORC != 0 )); then
			bad "ptrace/shares: the fp observer exited with status $ORC"
		elif ! top_flat shares_obs.pb.gz "$EV" >flat_obs.txt && ! top_flat shares_obs.pb.gz 1 >flat_obs.txt; then
			bad "ptrace/shares: go tool pprof -top cannot read the fp observer's profile"
		fi
		nobs=$(awk '/ samples of / { for (i = 1; i <= NF; i++) if ($(i + 1) == "samples") { print $i; exit } }' shares_obs.err)
	else
		run_pmutop "shares_$eng" --no-tui --unwind="$eng" -e "$EV" --period "$SP" --duration "$DUR" \
			--dump "shares_$eng.pb.gz" -- "$W/shares" $((DUR + 5))
	fi
	show "shares_$eng.err" 8
	if (( RC != 0 )) || [[ ! -s shares_$eng.pb.gz ]]; then
		bad "$eng/shares: pmutop exited with status $RC or wrote no profile"
		continue
	fi
	if [[ $eng == ptrace ]] && ! grep -q 'ptrace: .* stops for .* samples; skid' "shares_$eng.err"; then
		bad "ptrace: no stops/skid summary"
	fi
	top_flat "shares_$eng.pb.gz" "$EV" >"flat_$eng.txt" || top_flat "shares_$eng.pb.gz" 1 >"flat_$eng.txt" ||
		bad "$eng/shares: go tool pprof -top cannot read the profile"
	# The bound is never below 4 sigma of the sampling noise for the
	# samples the run got (a starved ptrace run: 5,888 samples, sigma of
	# J's 18.18% = 0.5 pp), so a busy machine does not fail it on chance;
	# against the observer, the noise of both profiles.
	nsamp=$(awk '/ samples of / { for (i = 1; i <= NF; i++) if ($(i + 1) == "samples") { print $i; exit } }' "shares_$eng.err")
	[[ $eng == ptrace ]] && obsfile=flat_obs.txt || obsfile=/dev/null
	awk -F'\t' -v tol="$SHARES_TOL" -v eng="$eng" -v ns="${nsamp:-0}" -v no="${nobs:-0}" '
	BEGIN {
		n = split("A_expect_1_82 B_expect_3_64 C_expect_5_45 D_expect_7_27 " \
			"E_expect_9_09 F_expect_10_91 G_expect_12_73 H_expect_14_55 " \
			"I_expect_16_36 J_expect_18_18", fn, " ")
	}
	FILENAME != "-" && FNR == NR { obs[$1] += $2; nob = 1; next }
	{ flat[$1] += $2 }
	END {
		for (k = 1; k <= n; k++) { sum += flat[fn[k]]; osum += obs[fn[k]] }
		if (sum <= 0) { print "  none of the ten functions has samples"; exit 1 }
		if (eng == "ptrace" && (osum <= 0 || no <= 0)) { print "  the fp observer has no samples of the ten functions"; exit 1 }
		for (k = 1; k <= n; k++) {
			nom = 100 * k / 55; got = 100 * flat[fn[k]] / sum
			want = eng == "ptrace" ? 100 * obs[fn[k]] / osum : nom
			err = got - want; abserr = err < 0 ? -err : err
			t = tol
			if (ns > 0) {
				v = want / 100 * (1 - want / 100) * (1 / ns + (eng == "ptrace" ? 1 / no : 0))
				sig = 400 * sqrt(v); if (sig > t) t = sig
			}
			if (abserr - t > over) { over = abserr - t }
			if (abserr > maxerr) { maxerr = abserr; worst = fn[k]; wtol = t }
			line = line sprintf(" %+.2f", err)
			d = got - nom; nomline = nomline sprintf(" %+.2f", d); d = d < 0 ? -d : d; if (d > maxnom) maxnom = d
			d = want - nom; d = d < 0 ? -d : d; if (d > spread) spread = d
		}
		what = eng == "ptrace" ? "the fp observer" : "k/55"
		printf "  %s shares: errors against %s (pp, A..J):%s\n", eng, what, line
		printf "  %s shares: max error %.2f pp (%s), tolerance %.2f pp (%.1f, or 4 sigma of %d%s samples)\n",
			eng, maxerr, worst, wtol, tol, ns, eng == "ptrace" ? " and " no : ""
		if (eng == "ptrace")
			printf "  ptrace shares: against k/55 (not checked):%s; the observer itself %.2f pp from k/55 at most\n",
				nomline, spread
		exit over > 0
	}' "$obsfile" - <"flat_$eng.txt" || bad "$eng: function shares off their truth by more than $SHARES_TOL pp"

	raw_samples "shares_$eng.pb.gz" >"raw_$eng.txt" || bad "$eng/shares: go tool pprof -raw failed"
	awk -F'\t' -v eng="$eng" '
	$4 ~ /^[A-J]_expect_/ {
		split($1, v, " "); hot += v[1]
		if ($4 ~ /^[A-J]_expect_[0-9_]*;round_once;main(;|$)/) full += v[1]
		if ($4 ~ /;main(;|$)/) mainok += v[1]
	}
	END {
		if (!hot) { print "  no samples in the ten functions"; exit 1 }
		pf = 100 * full / hot; pm = 100 * mainok / hot
		printf "  %s stacks: leaf;round_once;main %.1f%%, reaching main %.1f%% of %d samples\n", eng, pf, pm, hot
		exit (eng == "ptrace" ? pf : pm) < 90
	}' "raw_$eng.txt" || bad "$eng: stacks of the ten functions incomplete"

	# ---- threads ----
	THREADS_CPU_FILE=$T/threads_$eng.cpu THREADS_COUNT_EVENT=$EV run_pmutop "threads_$eng" --no-tui --unwind="$eng" -e "$EV" \
		--period "$TP" --dump "threads_$eng.pb.gz" -- "$W/threads" "$DUR"
	show "threads_$eng.err" 8
	if (( RC != 0 )) || [[ ! -s threads_$eng.pb.gz ]] || [[ ! -s threads_$eng.cpu ]]; then
		bad "$eng/threads: pmutop exited with status $RC, or it wrote no profile or the workload no CPU times"
		continue
	fi
	raw_samples "threads_$eng.pb.gz" >"rawt_$eng.txt" || bad "$eng/threads: go tool pprof -raw failed"
	lost=$(sed -n 's/.*; lost \([0-9]*\),.*/\1/p' "threads_$eng.err" | head -n 1)
	thread_shares "rawt_$eng.txt" "threads_$eng.cpu" "$eng threads" "${lost:-0}" "$TP" ||
		bad "$eng: per-thread shares off the CPU time the threads ran, or labels wrong"
done

(( errs == 0 )) || fail "$errs check(s) failed ($EV)"
pass "ptrace and fp engines within their bounds on shares and threads ($EV)"
