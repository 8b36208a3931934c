/*
 * crt.c - the terminal (see crt.h): the only file that changes its modes.
 */
#include "crt.h"
#include "pmutop/target/module.h"

#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <term.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static bool active, colors, atexit_done;
static SCREEN *screen;
static FILE *input;        /* our own handle on the terminal: a dup of stdin */
static int input_fd = -1;
static int saved_stderr = -1, capture_fd = -1;
static sigset_t saved_mask;
static bool mask_saved;
static int role_attr[CRT_NROLES];

static const int fatal_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
#define NFATAL (sizeof(fatal_signals) / sizeof(fatal_signals[0]))
/* What each had before ours: given back by remove_fatal_handlers(). */
static struct sigaction fatal_old[NFATAL];

/* Put fd 2 back; returns the capture fd (still open) or -1. */
static int stderr_restore(void)
{
	int fd = capture_fd;

	if (saved_stderr >= 0) {
		dup2(saved_stderr, STDERR_FILENO);
		close(saved_stderr);
		saved_stderr = -1;
	}
	capture_fd = -1;
	return fd;
}

/*
 * Last resort on a crash: give the terminal back, say what happened, and
 * die of the same signal (core dump and exit status as without us). endwin()
 * is not async-signal-safe, but the alternative is a dead terminal - htop
 * makes the same trade.
 */
static void on_fatal(int sig, siginfo_t *si, void *uctx)
{
	static const char msg[] = "pmutop: fatal signal; terminal restored\n";
	ssize_t r;

	(void)uctx;
	/*
	 * A mapped target file truncated under us is not a crash: module.c
	 * covers the page and the read is retried (issue 32: the live view
	 * used to replace that protection and die, the --dump after it lost).
	 */
	if (sig == SIGBUS && module_sigbus_recover(si))
		return;
	if (active) {
		active = false;
		endwin();
	}
	stderr_restore();
	r = write(STDERR_FILENO, msg, sizeof(msg) - 1);
	(void)r;
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install_fatal_handlers(void)
{
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fatal;
	sigemptyset(&sa.sa_mask);
	/* Not SA_RESETHAND: a recovered SIGBUS keeps the handler (on_fatal resets). */
	sa.sa_flags = SA_SIGINFO;
	for (i = 0; i < NFATAL; i++)
		sigaction(fatal_signals[i], &sa, &fatal_old[i]);
}

/*
 * The handlers there were before (module.c's SIGBUS protection among
 * them), unless someone installed another over ours meanwhile - module.c
 * does on its first mapped file, keeping ours as its fallback: its own then
 * stays, with SIG_DFL as the fallback once the terminal is given back.
 */
static void remove_fatal_handlers(void)
{
	struct sigaction cur;
	size_t i;

	for (i = 0; i < NFATAL; i++) {
		if (sigaction(fatal_signals[i], NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
		    cur.sa_sigaction != on_fatal)
			continue;
		sigaction(fatal_signals[i], &fatal_old[i], NULL);
	}
}

static void stderr_capture(void)
{
	int fd = memfd_create("pmutop-stderr", MFD_CLOEXEC);

	if (fd < 0) {
		FILE *f = tmpfile();

		if (!f)
			return;  /* not fatal: stderr goes to the screen */
		fd = fcntl(fileno(f), F_DUPFD_CLOEXEC, 3);
		fclose(f);
		if (fd < 0)
			return;
	}
	fflush(stderr);
	saved_stderr = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	if (saved_stderr < 0 || dup2(fd, STDERR_FILENO) < 0) {
		if (saved_stderr >= 0)
			close(saved_stderr);
		saved_stderr = -1;
		close(fd);
		return;
	}
	capture_fd = fd;
}

/* Copy what was captured to the real stderr. */
static void stderr_replay(int fd)
{
	char buf[4096];
	ssize_t n;

	if (fd < 0)
		return;
	if (lseek(fd, 0, SEEK_SET) == 0) {
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			if (write(STDERR_FILENO, buf, (size_t)n) != n)
				break;
	}
	close(fd);
}

static void setup_colors(void)
{
	static const struct { enum crt_role role; short fg, bg; int attr; } pairs[] = {
		{ CRT_HEADER_LABEL, COLOR_CYAN, -1, 0 },
		{ CRT_HEADER_VALUE, -1, -1, A_BOLD },
		{ CRT_TITLE, COLOR_BLACK, COLOR_GREEN, 0 },
		{ CRT_SELECTED, COLOR_BLACK, COLOR_CYAN, 0 },
		{ CRT_HOT, COLOR_RED, -1, A_BOLD },
		{ CRT_WARM, COLOR_YELLOW, -1, 0 },
		{ CRT_DIM, COLOR_BLUE, -1, A_BOLD },
		{ CRT_NOTICE, COLOR_WHITE, COLOR_RED, A_BOLD },
		{ CRT_MESSAGE, COLOR_GREEN, -1, A_BOLD },
		{ CRT_KEY, -1, -1, A_BOLD },
		{ CRT_KEY_TEXT, COLOR_BLACK, COLOR_CYAN, 0 },
	};
	const char *nc = getenv("NO_COLOR");
	size_t i;

	/* Plain attributes first: what a terminal without colour gets. */
	role_attr[CRT_NORMAL] = A_NORMAL;
	role_attr[CRT_HEADER_LABEL] = A_NORMAL;
	role_attr[CRT_HEADER_VALUE] = A_BOLD;
	role_attr[CRT_TITLE] = A_REVERSE;
	role_attr[CRT_SELECTED] = A_REVERSE | A_BOLD;
	role_attr[CRT_HOT] = A_BOLD;
	role_attr[CRT_WARM] = A_NORMAL;
	role_attr[CRT_DIM] = A_DIM;
	role_attr[CRT_NOTICE] = A_REVERSE | A_BOLD;
	role_attr[CRT_MESSAGE] = A_BOLD;
	role_attr[CRT_KEY] = A_BOLD;
	role_attr[CRT_KEY_TEXT] = A_REVERSE;

	colors = has_colors() && !(nc && *nc) && start_color() == OK;
	if (!colors)
		return;
	use_default_colors();
	for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		short pair = (short)(i + 1);

		if (init_pair(pair, pairs[i].fg, pairs[i].bg) != OK)
			continue;
		role_attr[pairs[i].role] = COLOR_PAIR(pair) | pairs[i].attr;
	}
}

static void done_at_exit(void)
{
	crt_done();
}

int crt_check(char *why, size_t len)
{
	const char *term = getenv("TERM");
	struct winsize ws;
	const char *cup;
	int e = 0;

	if (!term || !*term) {
		snprintf(why, len, "TERM is not set");
		return -1;
	}
	if (setupterm(term, STDOUT_FILENO, &e) != OK) {
		snprintf(why, len, "TERM=%s is not a terminal terminfo knows", term);
		return -1;
	}
	cup = tigetstr("cup");
	del_curterm(cur_term);
	if (!cup || cup == (const char *)-1) {
		snprintf(why, len, "TERM=%s cannot move the cursor", term);
		return -1;
	}
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col && ws.ws_row &&
	    (ws.ws_col < CRT_MIN_COLS || ws.ws_row < CRT_MIN_LINES)) {
		snprintf(why, len, "the terminal is %ux%u, smaller than the %dx%d the view needs",
			 ws.ws_col, ws.ws_row, CRT_MIN_COLS, CRT_MIN_LINES);
		return -1;
	}
	return 0;
}

int crt_init(char *err, size_t errlen)
{
	sigset_t mask;

	if (active)
		return 0;
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		snprintf(err, errlen, "the live view needs a terminal on stdin and stdout");
		return -1;
	}
	/* Blocked first: a Ctrl-C from here on ends the view through the loop. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, &saved_mask) == 0)
		mask_saved = true;
	setlocale(LC_CTYPE, "");
	/*
	 * Keys come from a private duplicate of stdin (close-on-exec, above the
	 * low numbers): whatever else happens to fd 0 in this process, the view
	 * keeps its keyboard, and a launched command never inherits it.
	 */
	input_fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 10);
	input = input_fd >= 0 ? fdopen(input_fd, "r") : NULL;
	if (!input) {
		snprintf(err, errlen, "cannot use the terminal: %s", strerror(errno));
		if (input_fd >= 0)
			close(input_fd);
		input_fd = -1;
		goto fail;
	}
	screen = newterm(NULL, stdout, input);
	if (!screen) {
		const char *term = getenv("TERM");

		snprintf(err, errlen, "cannot use the terminal (TERM=%s); try TERM=xterm or --no-tui",
			 term ? term : "(unset)");
		fclose(input);
		input = NULL;
		input_fd = -1;
		goto fail;
	}
	set_term(screen);
	active = true;
	cbreak();  /* not raw(): Ctrl-C stays SIGINT (see crt.h) */
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	setup_colors();

	install_fatal_handlers();
	if (!atexit_done && atexit(done_at_exit) == 0)
		atexit_done = true;
	stderr_capture();
	return 0;
fail:
	if (mask_saved) {
		sigprocmask(SIG_SETMASK, &saved_mask, NULL);
		mask_saved = false;
	}
	return -1;
}

void crt_done(void)
{
	if (!active)
		return;
	active = false;
	curs_set(1);
	endwin();
	fflush(stdout);
	delscreen(screen);
	screen = NULL;
	if (input) {
		fclose(input);
		input = NULL;
		input_fd = -1;
	}
	remove_fatal_handlers();
	stderr_replay(stderr_restore());
	if (mask_saved) {
		sigprocmask(SIG_SETMASK, &saved_mask, NULL);
		mask_saved = false;
	}
}

bool crt_active(void)
{
	return active;
}

bool crt_has_colors(void)
{
	return colors;
}

int crt_attr(enum crt_role role)
{
	return (unsigned)role < CRT_NROLES ? role_attr[role] : (int)A_NORMAL;
}

int crt_read_key(void)
{
	int k = getch();

	return k == ERR ? -1 : k;
}

int crt_wait(int fd, int timeout_ms)
{
	struct pollfd p[2] = {
		{ .fd = input_fd, .events = POLLIN },
		{ .fd = fd, .events = POLLIN },
	};

	if (timeout_ms < 0)
		timeout_ms = 0;
	/* EINTR (SIGWINCH) simply ends the wait; the caller reads KEY_RESIZE. */
	if (poll(p, fd >= 0 ? 2 : 1, timeout_ms) > 0 &&
	    (p[0].revents & (POLLHUP | POLLERR | POLLNVAL)) && !(p[0].revents & POLLIN))
		return -1;  /* the terminal is gone (hangup): nothing more to show */
	return 0;
}

int crt_take_signal(void)
{
	static const struct timespec zero = { 0, 0 };
	sigset_t mask;
	int sig;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sig = sigtimedwait(&mask, NULL, &zero);
	return sig > 0 ? sig : 0;
}

void crt_force_redraw(void)
{
	clearok(curscr, TRUE);
}
